"""The installed wheel: versions agree, and a C program builds against it."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import rowvoi
from rowvoi import _setcover
from rowvoi.config import get_include, get_lib_dir

ROOT = Path(__file__).resolve().parents[2]


def test_header_library_and_package_versions_agree():
    lib_str, lib_num = _setcover.version()
    major, minor, patch, number, string = _setcover.header_version()
    assert lib_str == string == rowvoi.__version__
    assert lib_num == number == major * 10000 + minor * 100 + patch
    text = (Path(get_include()) / "rowvoi" / "version.h").read_text()
    assert f'"{string}"' in text


def test_installed_files():
    assert (Path(get_include()) / "rowvoi.h").exists()
    assert (Path(get_lib_dir()) / "librowvoi.so").exists()
    assert (Path(get_lib_dir()) / "pkgconfig" / "rowvoi.pc").exists()
    assert (Path(get_lib_dir()) / "cmake" / "rowvoi" / "rowvoiConfig.cmake").exists()


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")
def test_c_program_builds_with_config_flags(tmp_path):
    flags = subprocess.run(
        [sys.executable, "-m", "rowvoi.config", "--cflags", "--libs"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    exe = tmp_path / "key"
    subprocess.run(
        ["cc", str(ROOT / "examples" / "c" / "key.c"), *flags, "-o", str(exe)], check=True
    )
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    assert "key of cost 2.0 (optimal): city plan" in out


@pytest.mark.skipif(
    shutil.which("pkg-config") is None or shutil.which("cc") is None, reason="no pkg-config"
)
def test_c_program_builds_with_pkg_config(tmp_path):
    env = dict(os.environ, PKG_CONFIG_PATH=str(Path(get_lib_dir()) / "pkgconfig"))
    flags = subprocess.run(
        ["pkg-config", "--cflags", "--libs", "rowvoi"],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    exe = tmp_path / "key"
    subprocess.run(
        ["cc", str(ROOT / "examples" / "c" / "key.c"), *flags, "-o", str(exe)], check=True
    )
    assert subprocess.run([str(exe)], capture_output=True).returncode == 0


def test_import_prints_nothing_and_configures_no_logging():
    code = (
        "import logging, rowvoi; "
        "assert not logging.getLogger().handlers; "
        "assert logging.getLogger('rowvoi').handlers == []"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "" and proc.stderr == ""


@pytest.mark.skipif(shutil.which("cmake") is None or shutil.which("cc") is None, reason="no cmake")
def test_c_program_builds_with_cmake_find_package(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(ROOT / "examples" / "c" / "key.c", src / "key.c")
    (src / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.21)\n"
        "project(host C)\n"
        "find_package(rowvoi 0.1 REQUIRED)\n"
        "add_executable(key key.c)\n"
        "target_link_libraries(key PRIVATE rowvoi::rowvoi)\n"
    )
    build = tmp_path / "build"
    cmake_dir = str(Path(get_lib_dir()) / "cmake" / "rowvoi")
    subprocess.run(
        ["cmake", "-S", str(src), "-B", str(build), f"-Drowvoi_DIR={cmake_dir}"],
        check=True,
        capture_output=True,
    )
    subprocess.run(["cmake", "--build", str(build)], check=True, capture_output=True)
    assert subprocess.run([str(build / "key")], capture_output=True).returncode == 0
