"""The README's "Give an agent one search tool" runs as written and says
what it shows."""

import json
import re

from readme_blocks import ROOT, run_commands, run_python, section


def test_give_an_agent_one_search_tool(tmp_path):
    text = section("### Give an agent one search tool")
    outputs = run_commands(text, tmp_path / "home")
    assert outputs[0].startswith("built corpus 'tools' (generation 1): 320 artifacts")
    lines = outputs[1].splitlines()
    assert lines[1].split()[2] == "stripe.refund_payment"
    call = "call: refund_payment(payment_intent, amount, reason) on server stripe"
    assert call in " ".join(text.split())  # the prose quotes the output
    assert lines[3].strip() == call
    (result,) = json.loads(outputs[2])["results"]
    assert result["artifact_id"] == "jira.create_issue"
    meta = result["metadata"]
    assert (meta["server"], meta["tool"]) == ("jira", "create_issue")
    assert meta["param_names"][:3] == ["project_key", "summary", "issue_type"]
    assert meta["input_schema"]["required"] == ["project_key", "summary", "issue_type"]
    assert not (tmp_path / "home" / "corpora" / "tools").exists()
    out = run_python(text, tmp_path / "home").splitlines()
    assert out[0] == "web.fetch_url web fetch_url ['url']"
    assert out[1] == "True"
    assert json.loads(out[2].replace("'", '"'))["required"] == ["to"]
    assert "prints `web.fetch_url web fetch_url ['url']`, then `True`" in " ".join(text.split())


def test_the_figures_quoted_are_the_bench_results():
    text = " ".join(section("### Give an agent one search tool").split())
    bench = (ROOT / "bench" / "results" / "mcp_tools.md").read_text()
    rows = {}
    for line in bench.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) > 3 and cells[0] in ("dense", "lexical", "hybrid (rrf)", "hybrid (blend)"):
            rows.setdefault(cells[0], []).append(cells)
    top1 = {m: r[0][1] for m, r in rows.items()}
    assert f"{top1['dense']} of the requests in `dense` mode" in text
    assert f"{top1['lexical']} in `lexical`" in text
    assert f"{top1['hybrid (rrf)']} in `hybrid` (RRF)" in text
    assert f'{top1["hybrid (blend)"]} in `hybrid` with `fusion="blend"`' in text
    answered = {m: re.match(r"[\d.]+ %", r[1][2]).group() for m, r in rows.items()}
    refused = {m: re.match(r"[\d.]+ %", r[1][3]).group() for m, r in rows.items()}
    assert f"answered {answered['dense']} (dense) to {answered['hybrid (rrf)']} (hybrid)" in text
    assert f"{refused['dense']} of the out-of-catalogue requests are refused" in text
    assert (
        f"lexical refuses {refused['lexical']} of them but answers only {answered['lexical']}"
        in text
    )
