/*
** A C host using librowvoi: find the cheapest set of columns that tells
** five rows apart, and print the greedy acquisition path.
**
** Build against an installed wheel:
**   cc key.c $(python -m rowvoi.config --cflags --libs) -o key
*/
#include <stdio.h>

#include <rowvoi.h>

int main(void) {
    /* 5 rows x 4 columns of integer codes, column after column. */
    enum { ROWS = 5, COLS = 4 };
    static const int32_t codes[COLS * ROWS] = {
        0, 0, 1, 1, 2, /* city    */
        0, 1, 0, 1, 0, /* plan    */
        0, 0, 0, 0, 1, /* region  */
        0, 1, 2, 3, 4, /* user id */
    };
    static const double costs[COLS] = {1.0, 1.0, 0.5, 5.0};
    static const char *names[COLS] = {"city", "plan", "region", "user id"};

    rv_cover *p = NULL;
    rv_status st = rv_cover_create_pairs(codes, ROWS, COLS, costs, 0, &p);
    if (st != RV_OK) {
        fprintf(stderr, "%s: %s\n", rv_status_name(st), rv_errmsg());
        return 1;
    }
    rv_cover_options opt;
    rv_cover_options_init(&opt);
    opt.strategy = RV_COVER_EXACT;
    uint32_t sel[COLS];
    size_t n_sel = 0;
    rv_cover_info info;
    st = rv_cover_solve(p, &opt, sel, COLS, &n_sel, &info);
    if (st != RV_OK) {
        fprintf(stderr, "%s: %s\n", rv_status_name(st), rv_errmsg());
        rv_cover_free(p);
        return 1;
    }
    printf("rowvoi %s: key of cost %.1f%s:", rv_version(), info.cost,
           info.optimal ? " (optimal)" : "");
    for (size_t i = 0; i < n_sel; i++) printf(" %s", names[sel[i]]);
    printf("\n");
    rv_cover_free(p);
    /* The exact key is {city, plan} at cost 2.0. */
    return (n_sel == 2 && sel[0] == 0 && sel[1] == 1 && info.optimal) ? 0 : 1;
}
