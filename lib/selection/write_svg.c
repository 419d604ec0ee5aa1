/* PREFIX.svg (bosch_selection_write_svg): the heatmap of a selection, laid
 * out for its shape: a title and an info block, the layer numbers down the
 * left and the KV-group numbers along the top (every k-th when the cells
 * are too small for all), the grid, a bar with the SWA ratio of each layer
 * on the right, a legend. Every text's width is estimated conservatively
 * (svg_text_width) and the canvas holds the extents of all of them plus a
 * margin (docs/result-format.md). */
#include "bosch/bosch.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "selection/selection_impl.h"
#include "selection/svg_text.h"

#define MARGIN 12
#define FS_TITLE 14 /* font sizes, pixels */
#define FS_INFO 11
#define FS_LABEL 10
#define BAR_W 48        /* the per-layer SWA ratio bar */
#define GRID_BUDGET 640 /* the grid's width and height aim at most at this */
#define CELL_MIN 4
#define CELL_MAX 28
#define ROW_MIN 12 /* rows and columns at least this when the budget allows */
#define MAX_INFO 6
#define LINE_LEN 512

static const char GREEN[] = "#1b9e77", ORANGE[] = "#d95f02";
static const char LAYER_TITLE[] = "layer \xe2\x86\x93", GROUP_TITLE[] = "KV group \xe2\x86\x92";

struct line {
    char text[LINE_LEN];
    const char *tip; /* tooltip (the full model path) or NULL */
};

struct layout {
    long cw, ch;                /* cell width and height */
    uint32_t lstep, gstep;      /* every lstep-th layer / gstep-th group labelled */
    long info_y[MAX_INFO + 1];  /* baselines: title, info lines */
    struct line lines[MAX_INFO + 1];
    int n_lines;                /* title included */
    long axis_y, glabel_y;      /* baselines of the axis titles and group labels */
    long grid_x, grid_y;        /* top left of the grid */
    long bar_x, legend_y;       /* bars' left; legend's top */
    long width, height;
};

static long ceil_l(double v)
{
    return (long)ceil(v);
}

static long clamp_l(long v, long lo, long hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* The smallest of 1, 2, 5, 10, 20, 50, ... that is at least n. */
static uint32_t nice_step(double n)
{
    static const uint64_t mant[3] = {1, 2, 5};
    for (uint64_t p = 1;; p *= 10)
        for (int m = 0; m < 3; m++) {
            uint64_t v = p * mant[m];
            if ((double)v >= n || v >= UINT32_MAX / 10)
                return (uint32_t)v;
        }
}

/* Basename of a model directory: the last component, trailing slashes
 * ignored (the whole path when it has none). */
static void model_name(char *dst, size_t n, const char *path)
{
    size_t end = strlen(path);
    while (end > 1 && path[end - 1] == '/')
        end--;
    size_t start = end;
    while (start > 0 && path[start - 1] != '/')
        start--;
    if (start == end) {
        svg_clip(dst, n, path);
        return;
    }
    char tmp[LINE_LEN];
    size_t len = end - start < sizeof tmp - 1 ? end - start : sizeof tmp - 1;
    memcpy(tmp, path + start, len);
    tmp[len] = '\0';
    svg_clip(dst, n, tmp);
}

/* Appends printf text to a line (silently cut at LINE_LEN). */
static void add(struct line *ln, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(struct line *ln, const char *fmt, ...)
{
    size_t used = strlen(ln->text);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ln->text + used, sizeof ln->text - used, fmt, ap);
    va_end(ap);
}

/* The title and the info lines, leaving out what is not recorded. */
static void text_lines(const bosch_selection *s, struct layout *L)
{
    char clip[128];
    memset(L->lines, 0, sizeof L->lines);
    struct line *ln = L->lines;
    svg_clip(clip, 96, s->method ? s->method : "mask");
    add(ln, "%s: SWA ratio %.3f", clip, bosch_selection_ratio(s));
    if (!isnan(s->target_ratio))
        add(ln, " (target %.3f)", s->target_ratio);
    ln++;
    if (s->model_path) {
        model_name(clip, 96, s->model_path);
        add(ln, "model: %s", clip);
        ln->tip = s->model_path;
        ln++;
    }
    add(ln++, "%u layer%s x %u KV group%s x %u query head%s per group, %zu of %zu units SWA",
        s->layers, s->layers == 1 ? "" : "s", s->kv_groups, s->kv_groups == 1 ? "" : "s",
        s->heads_per_group, s->heads_per_group == 1 ? "" : "s", bosch_selection_swa_units(s),
        s->units);
    if (s->has_kv) {
        double frac =
            bosch_kv_saving(bosch_selection_ratio(s), s->kv_context, s->kv_window, s->kv_sink);
        add(ln++, "window %llu, sink %llu, context %llu, KV saving %.1f%%",
            (unsigned long long)s->kv_window, (unsigned long long)s->kv_sink,
            (unsigned long long)s->kv_context, 100 * frac);
    }
    double raw = s->score[BOSCH_SCORE_RAW], norm = s->score[BOSCH_SCORE_NORMALIZED];
    double full = s->score[BOSCH_SCORE_FULL], swa = s->score[BOSCH_SCORE_ALL_SWA];
    if (s->has_score && (s->metric || isfinite(raw) || isfinite(norm))) {
        const char *sep = "";
        if (s->metric) {
            svg_clip(clip, 48, s->metric);
            add(ln, "metric %s", clip);
            sep = ", ";
        }
        if (isfinite(raw)) {
            add(ln, "%sscore %.6g", sep, raw);
            sep = ", ";
        }
        if (isfinite(norm))
            add(ln, "%snormalized %.4f", sep, norm);
        if (isfinite(full) && isfinite(swa))
            add(ln, " (full %.6g, all-SWA %.6g)", full, swa);
        ln++;
    }
    if (s->has_evals)
        add(ln++, "evaluations %llu (%llu replayed)", (unsigned long long)s->total,
            (unsigned long long)s->replayed);
    L->n_lines = (int)(ln - L->lines);
}

/* Cell size: the grid within GRID_BUDGET when cells of CELL_MIN allow,
 * cells of at most CELL_MAX; rows and columns stretched to ROW_MIN when
 * the budget has room, so that small dimensions get every label. */
static void cell_size(const bosch_selection *s, struct layout *L)
{
    long by_w = clamp_l(GRID_BUDGET / (long)s->kv_groups, CELL_MIN, CELL_MAX);
    long by_h = clamp_l(GRID_BUDGET / (long)s->layers, CELL_MIN, CELL_MAX);
    long c = by_w < by_h ? by_w : by_h;
    long w = by_w < ROW_MIN ? by_w : ROW_MIN, h = by_h < ROW_MIN ? by_h : ROW_MIN;
    L->cw = c > w ? c : w;
    L->ch = c > h ? c : h;
}

static double max_d(double a, double b)
{
    return a > b ? a : b;
}

/* Row text (layer labels, ratio numbers) sits this far below the row's
 * middle; its box reaches 6 above and 7 below the middle (FS_LABEL). */
#define ROW_TEXT_DY 4
#define ROW_TEXT_UP 6
#define ROW_TEXT_DOWN 7

static void layout(const bosch_selection *s, struct layout *L)
{
    char num[32];
    text_lines(s, L);
    cell_size(s, L);
    L->lstep = nice_step((FS_LABEL + 2.0) / (double)L->ch);
    snprintf(num, sizeof num, "%u", s->kv_groups - 1);
    double glabel_w = svg_text_width(num, FS_LABEL);
    L->gstep = nice_step((glabel_w + 4) / (double)L->cw);

    /* vertical: title, info, axis titles, group labels, grid, legend */
    long y = MARGIN;
    double right = 0; /* rightmost extent of anything */
    for (int i = 0; i < L->n_lines; i++) {
        int fs = i ? FS_INFO : FS_TITLE;
        L->info_y[i] = y + ceil_l(0.95 * fs);
        y += ceil_l(1.3 * fs) + (i ? 1 : 3);
        right = max_d(right, MARGIN + svg_text_width(L->lines[i].text, fs));
    }
    y += 8;
    L->axis_y = y + ceil_l(0.95 * FS_INFO);
    y += ceil_l(1.3 * FS_INFO) + 2;
    L->glabel_y = y + ceil_l(0.95 * FS_LABEL);
    y += ceil_l(1.3 * FS_LABEL) + 2;
    L->grid_y = y + (L->ch / 2 < ROW_TEXT_UP ? ROW_TEXT_UP - L->ch / 2 : 0);
    long grid_bottom = L->grid_y + (long)s->layers * L->ch;
    long last = (long)((s->layers - 1) / L->lstep * L->lstep);
    long text_bottom = L->grid_y + last * L->ch + L->ch / 2 + ROW_TEXT_DOWN;
    L->legend_y = (grid_bottom > text_bottom ? grid_bottom : text_bottom) + 10;
    L->height = L->legend_y + ceil_l(1.3 * FS_INFO) + MARGIN;

    /* horizontal: layer labels, grid, bars and ratio numbers */
    snprintf(num, sizeof num, "%u", s->layers - 1);
    double label_w = max_d(svg_text_width(num, FS_LABEL), svg_text_width(LAYER_TITLE, FS_INFO));
    L->grid_x = MARGIN + ceil_l(label_w) + 4;
    long grid_right = L->grid_x + (long)s->kv_groups * L->cw;
    double glast = L->grid_x + ((s->kv_groups - 1) / L->gstep * L->gstep + 0.5) * L->cw;
    right = max_d(right, glast + glabel_w / 2);
    right = max_d(right, L->grid_x + svg_text_width(GROUP_TITLE, FS_INFO));
    L->bar_x = ceil_l(max_d(grid_right, glast + glabel_w / 2)) + 10;
    right = max_d(right, L->bar_x + BAR_W + 4 + svg_text_width("0.00", FS_LABEL));
    right = max_d(right, L->bar_x + svg_text_width("SWA ratio", FS_LABEL));
    /* legend: two swatches of 10 with their words */
    right = max_d(right, MARGIN + 14 + ceil_l(svg_text_width("full", FS_INFO)) + 16 + 14 +
                             svg_text_width("SWA", FS_INFO));
    L->width = ceil_l(right) + MARGIN;
}

static void put_text(FILE *f, long x, long y, int fs, const char *cls, const char *anchor,
                     const char *t)
{
    fprintf(f, "<text x=\"%ld\" y=\"%ld\" font-size=\"%d\" class=\"%s\"%s%s%s>", x, y, fs, cls,
            anchor ? " text-anchor=\"" : "", anchor ? anchor : "", anchor ? "\"" : "");
    svg_put_text(f, t);
    fputs("</text>\n", f);
}

static void draw_header(FILE *f, const struct layout *L)
{
    for (int i = 0; i < L->n_lines; i++) {
        const struct line *ln = &L->lines[i];
        if (ln->tip) {
            fputs("<g><title>", f);
            svg_put_text(f, ln->tip);
            fputs("</title>", f);
        }
        put_text(f, MARGIN, L->info_y[i], i ? FS_INFO : FS_TITLE, i ? "info" : "title", NULL,
                 ln->text);
        if (ln->tip)
            fputs("</g>\n", f);
    }
    put_text(f, L->grid_x - 4, L->axis_y, FS_INFO, "axis-title", "end", LAYER_TITLE);
    put_text(f, L->grid_x, L->axis_y, FS_INFO, "axis-title", NULL, GROUP_TITLE);
    put_text(f, L->bar_x, L->glabel_y, FS_LABEL, "axis-title", NULL, "SWA ratio");
}

static void draw_group_labels(FILE *f, const bosch_selection *s, const struct layout *L)
{
    char num[16];
    for (uint32_t g = 0; g < s->kv_groups; g += L->gstep) {
        snprintf(num, sizeof num, "%u", g);
        put_text(f, L->grid_x + (long)g * L->cw + L->cw / 2, L->glabel_y, FS_LABEL,
                 "group-label", "middle", num);
        if (s->kv_groups - g <= L->gstep)
            break;
    }
}

static void draw_cells(FILE *f, const bosch_selection *s, const struct layout *L)
{
    /* white lines between cells, unless they would hide small cells */
    fputs(L->cw >= 8 && L->ch >= 8 ? "<g stroke=\"white\" stroke-width=\"1\">\n" : "<g>\n", f);
    for (uint32_t l = 0; l < s->layers; l++)
        for (uint32_t g = 0; g < s->kv_groups; g++) {
            size_t u = (size_t)l * s->kv_groups + g;
            int swa = s->mask[u] != 0;
            fprintf(f, "<rect x=\"%ld\" y=\"%ld\" width=\"%ld\" height=\"%ld\" fill=\"%s\">"
                       "<title>layer %u group %u: %s",
                    L->grid_x + (long)g * L->cw, L->grid_y + (long)l * L->ch, L->cw, L->ch,
                    swa ? ORANGE : GREEN, l, g, swa ? "SWA" : "full");
            if (s->importance && isfinite(s->importance[u]))
                fprintf(f, ", importance %.4g", s->importance[u]);
            fputs("</title></rect>\n", f);
        }
    fputs("</g>\n", f);
}

/* Per layer: a bar of the SWA ratio; on the labelled rows the layer number
 * on the left and the ratio on the right. */
static void draw_rows(FILE *f, const bosch_selection *s, const struct layout *L)
{
    char num[32];
    long bar_h = L->ch >= 6 ? L->ch - 2 : L->ch - 1, inset = (L->ch - bar_h) / 2;
    for (uint32_t l = 0; l < s->layers; l++) {
        unsigned n = 0;
        for (uint32_t g = 0; g < s->kv_groups; g++)
            n += s->mask[(size_t)l * s->kv_groups + g] != 0;
        double ratio = (double)n / s->kv_groups;
        long top = L->grid_y + (long)l * L->ch;
        fprintf(f, "<rect x=\"%ld\" y=\"%ld\" width=\"%d\" height=\"%ld\" fill=\"#eeeeee\"/>",
                L->bar_x, top + inset, BAR_W, bar_h);
        if (n)
            fprintf(f, "<rect x=\"%ld\" y=\"%ld\" width=\"%.2f\" height=\"%ld\" fill=\"%s\"/>",
                    L->bar_x, top + inset, ratio * BAR_W, bar_h, ORANGE);
        fputc('\n', f);
        if (l % L->lstep)
            continue;
        long base = top + L->ch / 2 + ROW_TEXT_DY;
        snprintf(num, sizeof num, "%u", l);
        put_text(f, L->grid_x - 4, base, FS_LABEL, "layer-label", "end", num);
        snprintf(num, sizeof num, "%.2f", ratio);
        put_text(f, L->bar_x + BAR_W + 4, base, FS_LABEL, "ratio-label", NULL, num);
    }
}

static void draw_legend(FILE *f, const struct layout *L)
{
    long y = L->legend_y, x = MARGIN;
    long x2 = x + 14 + ceil_l(svg_text_width("full", FS_INFO)) + 16;
    fprintf(f, "<rect x=\"%ld\" y=\"%ld\" width=\"10\" height=\"10\" fill=\"%s\"/>\n", x, y + 2,
            GREEN);
    put_text(f, x + 14, y + 11, FS_INFO, "legend", NULL, "full");
    fprintf(f, "<rect x=\"%ld\" y=\"%ld\" width=\"10\" height=\"10\" fill=\"%s\"/>\n", x2, y + 2,
            ORANGE);
    put_text(f, x2 + 14, y + 11, FS_INFO, "legend", NULL, "SWA");
}

int bosch_selection_write_svg(const bosch_selection *s, const char *path)
{
    static const char fn[] = "bosch_selection_write_svg";
    afile t;
    FILE *f = sel_open_out(s, &t, path, fn);
    if (!f)
        return s && path ? BOSCH_E_IO : BOSCH_E_INVALID;
    struct layout L;
    layout(s, &L);
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%ld\" height=\"%ld\" "
               "viewBox=\"0 0 %ld %ld\" font-family=\"sans-serif\" font-size=\"%d\">\n",
            L.width, L.height, L.width, L.height, FS_LABEL);
    fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%ld\" height=\"%ld\" fill=\"white\"/>\n", L.width,
            L.height);
    draw_header(f, &L);
    draw_group_labels(f, s, &L);
    draw_cells(f, s, &L);
    draw_rows(f, s, &L);
    draw_legend(f, &L);
    fputs("</svg>\n", f);
    return sel_close_out(s, &t, fn);
}
