#!/bin/sh
# CLI tests of `rotor report` and `rotor explore --report` (docs/report.md).
# The pages' structure: every section; the run's identity in the header
# (model, batch, sequence, chip, command line, version); BERT-Large's 145
# operators with plans as 7 frontier charts with their counts (issue 46:
# at most 10), the plans they chose marked; two time bars per operator
# shape (T10, VGM); one heat-map cell per core, in at least two colours; an
# energy section; the timeline one row per layer, its title in us; one
# breakdown bar per design; a heat map of explore's grid, and its latency
# plot saying which designs coincide; every chart with its axes, a tall one
# with them at the top and the bottom; sections that do not apply say so;
# no reference outside the file; the same bytes twice.  Then, when Debian's
# chromium is installed, each page in a real headless browser, one launch
# each: no script error, console error or Content-Security-Policy
# violation, every chart's SVG laid out at a non-zero size, the report's
# header, frontiers, energy and heat map as a reader sees them, and a
# screenshot of the expected size that is not one colour.
# Models: bert-large at batch 8 (issue 46's acceptance, 2-3 s), opt-1.3b
# with --layers 1, llama2-7b's schedule (a second each).
# Run by `make test` as `ROTOR=build/rotor sh tests/cli_report.sh`.
. "$(dirname "$0")/lib.sh"

expect_out help "usage: rotor report MODEL" -- report --help
expect_error no-model 2 "rotor report: a model is required" -- report
expect_error bad-model 2 "rotor report: unknown model 'nosuch'" -- report nosuch -o "$tmpdir/n.html"
expect_error bad-path 2 "rotor report: -o: /no/such/dir/r.html: cannot write" -- report bert-base -o /no/such/dir/r.html
expect_error design-no-hbm 2 "chip 'ipu-mk2' has no HBM" -- report bert-base --design full -o "$tmpdir/n.html"
expect_error bad-design 2 "rotor report: --design" -- report opt-1.3b --chip ipu-pod4 --design fast -o "$tmpdir/n.html"
expect_error explore-stdout 2 "rotor explore: --report -:" -- explore opt-1.3b --sweep hbm-bw=2,4 --report -
if [ -e "$tmpdir/n.html" ] || ls "$tmpdir"/n.html.tmp.* >/dev/null 2>&1; then bad "a failed report left a file"; else ok; fi

# count FILE PATTERN: occurrences of the fixed string PATTERN in FILE
count() { grep -o -F -- "$2" "$1" | wc -l | tr -d ' '; }
# want NAME GOT WANT
want() { if [ "$2" -eq "$3" ]; then ok; else bad "$1: $2, want $3"; fi; }

# check_page NAME FILE: well-formed enough, self-contained, every section
check_page() {
    f=$2
    [ -s "$f" ] || { bad "$1: no page"; return; }
    if head -n 1 "$f" | grep -q '^<!DOCTYPE html>$'; then ok; else bad "$1: no doctype"; fi
    if grep -q "Content-Security-Policy\" content=\"default-src 'none'" "$f"; then ok; else bad "$1: no CSP"; fi
    for tag in svg section figure table html body head; do
        want "$1: <$tag> closed" "$(count "$f" "<$tag")" "$(count "$f" "</$tag>")"
    done
    # nothing outside the file: the SVG namespace is the only URL, and no src/href but #anchors
    n=$(grep -o -E 'https?://[^" ]*' "$f" | grep -v -c -F 'http://www.w3.org/2000/svg')
    want "$1: URLs besides the SVG namespace" "$n" 0
    n=$(grep -o -E '(src|href)="[^#][^"]*"' "$f" | wc -l)
    want "$1: src/href leaving the page" "$n" 0
    n=$(grep -c -E '<(script|img|link|iframe|object)[ >]' "$f")
    want "$1: script, img, link, iframe or object" "$n" 0
    # every chart has width, height, viewBox
    want "$1: svg with a viewBox" "$(grep -o -E '<svg [^>]*width="[0-9]+" height="[0-9]+" viewBox="0 0 [0-9]+ [0-9]+"' "$f" | wc -l)" \
        "$(count "$f" "<svg")"
}

# ---- bert-large, batch 8, on ipu-mk2 (issue 46's acceptance): the compile, the replay, no HBM ----
mkdir -p "$tmpdir/a" "$tmpdir/b"
bert=$tmpdir/a/bl.html
"$ROTOR" report bert-large --batch 8 -o "$bert" >"$out" 2>"$err" || bad "report bert-large: $(cat "$err")"
if grep -q "rotor report: wrote $bert" "$out"; then ok; else bad "report: stdout $(cat "$out")"; fi
check_page bert "$bert"
for id in run summary frontiers algorithm1 op-times heatmap energy timeline breakdown sweeps; do
    if grep -q "<section id=\"$id\">" "$bert"; then ok; else bad "bert: no section $id"; fi
done
# 220 operators: 145 with plans (24 layers x 6 contractions and the pooler) in 7 shapes, 11 shapes
# with the vendor ones (tests/test_report.c counts them on the graph)
want "bert: frontier charts (one per operator shape)" "$(count "$bert" 'data-kind="frontier"')" 7
n=$(grep -o 'data-kind="frontier" data-count="[0-9]*"' "$bert" | tr -dc '0-9\n' | awk '{ s += $1 } END { print s + 0 }')
want "bert: operators the frontier charts stand for" "$n" 145
n=$(count "$bert" 'class="chosen"')
[ "$n" -ge 7 ] && ok || bad "bert: $n chosen plans marked, want one per chart at least"
if grep -q '<text[^>]*font-size="13">l0.qkv x24</text>' "$bert"; then ok; else bad "bert: no 'l0.qkv x24' chart"; fi
want "bert: operator-shape bars (T10 and VGM)" "$(count "$bert" '<g class="bar">')" $((2 * 11 + 2))
want "bert: heat-map cells (ipu-mk2: 1472 cores)" "$(count "$bert" 'class="core"')" 1472
want "bert: Algorithm 1 plots" "$(count "$bert" 'data-kind="algorithm1"')" 1
want "bert: energy charts" "$(count "$bert" 'data-kind="energy"')" 1
# no HBM: the timeline and the breakdown say why instead of a chart
want "bert: sections that say why not" "$(grep -c '<p class="na">The chip has no HBM' "$bert")" 2
want "bert: no timeline" "$(count "$bert" 'data-kind="timeline"')" 0
"$ROTOR" report bert-large --batch 8 -o "$tmpdir/b/bl.html" >/dev/null 2>&1
if cmp -s "$bert" "$tmpdir/b/bl.html"; then ok; else bad "bert: two runs differ"; fi

# The page's structure, parsed (python3's html.parser): the header's fields, at most 10 frontier
# charts, the energy section's rows, a heat map of at least two colours, every chart with its
# axes, a tall one (over 600 px) with them at the top and the bottom; the tallest chart.
py=${PYTHON3:-python3}
version=$(sed -n 's/^#define ROTOR_VERSION "\(.*\)"$/\1/p' "$(dirname "$0")/../include/rotor/base/version.h")
structure() { # FILE: prints one line of facts
    "$py" - "$1" <<'PY'
import sys
from html.parser import HTMLParser
class P(HTMLParser):
    def __init__(s):
        super().__init__(); s.field = None; s.fields = {}; s.fills = set(); s.svgs = []; s.frontiers = 0
        s.energy_rows = 0; s.section = None
    def handle_starttag(s, tag, a):
        a = dict(a)
        if tag == "section": s.section = a.get("id")
        if tag == "tr" and "data-field" in a: s.field = a["data-field"]; s.fields[s.field] = ""
        if tag == "tr" and s.section == "energy": s.energy_rows += 1
        if tag == "td" and s.field: s.fields[s.field] = ""
        if tag == "figure" and a.get("data-kind") == "frontier": s.frontiers += 1
        if tag == "rect" and a.get("class") == "core": s.fills.add(a.get("fill"))
        if tag == "svg": s.svgs.append([a.get("class"), int(a.get("height")), 0])
        if tag == "g" and a.get("class") == "axis": s.svgs[-1][2] += 1
    def handle_endtag(s, tag):
        if tag == "tr": s.field = None
    def handle_data(s, d):
        if s.field: s.fields[s.field] += d
p = P(); p.feed(open(sys.argv[1], encoding="utf-8").read())
tall_bad = [c for c, h, axes in p.svgs if h > 600 and axes < 2]
plain_bad = [c for c, h, axes in p.svgs if c in ("bars", "frontier", "timeline") and axes < 1]
f = p.fields
print("model=%s batch=%s seq=%s chip=%s command=[%s] version=[%s] frontiers=%d energy_rows=%d fills=%d "
      "tall_without_axes=%d charts_without_axes=%d tallest=%d" % (f.get("model"), f.get("batch"),
      "yes" if f.get("sequence") else "no", f.get("chip", "").split(":")[0], f.get("command"), f.get("version"),
      p.frontiers, p.energy_rows, len(p.fills), len(tall_bad), len(plain_bad), max(h for c, h, a in p.svgs)))
PY
}
if ! "$py" -c 'import html.parser' 2>/dev/null; then
    echo "cli_report: page structure test skipped: no python3"
else
    s=$(structure "$bert")
    case $s in
    "model=bert-large (BERT-Large encoder, 24 x 1024, seq 128) batch=8 seq=yes chip=ipu-mk2 command=[rotor report bert-large --batch 8 -o bl.html] version=[rotor $version] frontiers=7 energy_rows=3 fills="*" tall_without_axes=0 charts_without_axes=0 tallest="*) ok ;;
    *) bad "bert: structure '$s'" ;;
    esac
    fills=$(echo "$s" | sed 's/.* fills=\([0-9]*\).*/\1/')
    tallest=$(echo "$s" | sed 's/.* tallest=\([0-9]*\).*/\1/')
    [ "$fills" -ge 2 ] && ok || bad "bert: the heat map has $fills colour(s)"
    [ "$tallest" -le 600 ] && ok || bad "bert: a chart $tallest px tall (issue 46: 9,316)"
fi

# ---- opt-1.3b on ipu-pod4: every section, the schedule too ----
opt=$tmpdir/opt.html
"$ROTOR" report opt-1.3b --layers 1 --chip ipu-pod4 -o "$tmpdir" >"$out" 2>"$err" || bad "report opt: $(cat "$err")"
mv "$tmpdir/opt-1.3b-report.html" "$opt" 2>/dev/null || bad "report -o DIR: no opt-1.3b-report.html"
check_page opt "$opt"
"$ROTOR" schedule opt-1.3b --layers 1 --json >"$tmpdir/sched.json" 2>"$err" || bad "schedule: $(cat "$err")"
sops=$(grep '"operators":' "$tmpdir/sched.json" | head -n 1 | tr -dc 0-9)
# one row per layer and per run of operators outside layers: the embedding, the layer, the head
want "opt: timeline rows (one per layer group)" "$(count "$opt" '<g class="op">')" 3
want "opt: executions drawn (one per scheduled operator)" "$(count "$opt" 'class="exec"')" "$sops"
if grep -q '<g class="op"><text[^>]*>layer 1 (' "$opt"; then ok; else bad "opt: no 'layer 1' row"; fi
# the title in the axis's unit
if grep -q 'font-size="13">full design, one chip of [0-9]* (tensor parallel): [0-9.]* us per token<' "$opt" &&
    grep -q '>time from the start of the step (us)<' "$opt"; then ok; else bad "opt: the timeline's title is not in us"; fi
n=$(count "$opt" 'class="preload"')
[ "$n" -gt 0 ] && [ "$n" -le "$sops" ] && ok || bad "opt: $n preloads drawn for $sops operators"
want "opt: timelines" "$(count "$opt" 'data-kind="timeline"')" 1
want "opt: breakdown" "$(count "$opt" 'data-kind="breakdown"')" 1
# T10's compile plans one chip: on ipu-pod4's four its sections say why not (until 2026-12-03 it
# planned all 5888 cores as one chip, the crossings between chips at on-chip rates), as the sweeps'
want "opt: no heat map (ipu-pod4 is 4 chips)" "$(count "$opt" 'class="core"')" 0
want "opt: the compile sections and the sweeps' say why not" "$(count "$opt" '<p class="na">')" 5
want "opt: the compile sections name the chips" "$(grep -c '<p class="na">[^<]*is 4 chips' "$opt")" 4
# energy: the six designs
want "opt: energy rows" "$(awk '/<section id="energy">/,/<\/section>/' "$opt" | grep -c '<tr><td>')" 6
n=$(awk '/data-kind="breakdown"/,/<\/figure>/' "$opt" | grep -c '<g class="bar">')
want "opt: breakdown bars (6 designs)" "$n" 6

# ---- llama2-7b on ipu-pod4: too big for SRAM, scheduled from HBM ----
l7=$tmpdir/l7.html
"$ROTOR" report llama2-7b --chip ipu-pod4 -o "$l7" >"$out" 2>"$err" || bad "report llama2-7b: $(cat "$err")"
check_page llama "$l7"
want "llama: compile sections that say why not" "$(grep -c '<p class="na">[^<]*is 4 chips' "$l7")" 4
# ... and do not call it the SRAM: T10 refuses a package of 4 chips (every failure was "does
# not fit in the chip's SRAM" before)
want "llama: not compiled, not the SRAM" "$(grep -c '<p class="na">[^<]*The model was not compiled[^<]*is 4 chips' "$l7")" 4
want "llama: no SRAM claim" "$(grep -c "does not fit in the chip's SRAM" "$l7")" 0
# the Run table says what ran: the layers, the HBM and the chips of the schedule (the model's own
# "32 x 4096" stood under "sequence", and --hbm-bw and --tp were nowhere)
want "llama: run layers" "$(grep -c '<tr data-field="layers"><td>layers</td><td>all (32)</td>' "$l7")" 1
want "llama: run sequence" "$(grep -c '<td>sequence</td><td>the model.s default (docs/zoo.md)</td>' "$l7")" 1
want "llama: run chip" "$(grep -c '<td>chip</td><td>ipu-pod4: 4 chips x 1472 cores, all-to-all, HBM 16 TB/s in all</td>' "$l7")" 1
want "llama: run tp" "$(grep -c '<td>tensor parallel</td><td>4 of 4 chips</td>' "$l7")" 1
want "llama: energy rows (the six designs)" "$(awk '/<section id="energy">/,/<\/section>/' "$l7" | grep -c '<tr><td>')" 6
want "llama: frontiers" "$(count "$l7" 'data-kind="frontier"')" 0
want "llama: timelines" "$(count "$l7" 'data-kind="timeline"')" 1
# ... and without HBM there is nothing to report: exit 1, one line, no file
expect_error llama-mk2 1 "rotor report: the model does not fit in 638976 bytes of SRAM" -- report llama2-7b -o "$tmpdir/n.html"
if [ -e "$tmpdir/n.html" ]; then bad "llama-mk2 left a file"; else ok; fi

# ---- mlp-l on meshes: the summary says what `rotor compile` notes ----
# ipu-mk2-mesh: the setups' exchanges 1.31x their bound; a 72 x 1 mesh: the
# narrow mesh's caveat; ipu-mk2: no note
run_saved "$tmpdir/mesh" -- report mlp-l --chip ipu-mk2-mesh -o "$tmpdir/mesh.html" -q
want mesh-exit "$(cat "$tmpdir/mesh.rc")" 0
want mesh-notes "$(count "$tmpdir/mesh.html" "<tr><td>note</td>")" 1
if grep -q -F "<tr><td>note</td><td>the setups' exchanges take 1.360 us, 1.31x what their busiest links bound them to (1.039 us); the walk chose the plans by that bound, then each by the exchanges where another plan was faster (docs/mesh.md, &quot;Setup&quot;)</td></tr>" "$tmpdir/mesh.html"; then ok; else bad "mesh note: $(grep -o '<tr><td>note.*' "$tmpdir/mesh.html")"; fi
run_saved "$tmpdir/narrow" -- report mlp-l --set cores_per_chip=72 --set topology=mesh --set mesh_width=72 --set mesh_height=1 -o "$tmpdir/narrow.html" -q
if grep -q -F "<tr><td>note</td><td>on a 72x1 mesh (a side of 2 cores or fewer)" "$tmpdir/narrow.html"; then ok; else bad "narrow note: $(grep -o '<tr><td>note.*' "$tmpdir/narrow.html")"; fi
run_saved "$tmpdir/flat" -- report mlp-l -o "$tmpdir/flat.html" -q
want narrow-exit "$(cat "$tmpdir/narrow.rc")" 0
want flat-exit "$(cat "$tmpdir/flat.rc")" 0
want flat-notes "$(count "$tmpdir/flat.html" "<tr><td>note</td>")" 0

# ---- explore --report: a grid of two keys, its heat maps ----
ex=$tmpdir/ex.html
"$ROTOR" explore opt-1.3b --layers 1 --sweep hbm-bw=2,8 --sweep noc-bw=4,8 -o "$tmpdir/e" --report "$ex" >"$out" 2>"$err" ||
    bad "explore --report: $(cat "$err")"
check_page explore "$ex"
# latency and, the preset pricing energy (docs/energy.md), energy
want "explore: heat maps" "$(count "$ex" 'data-kind="grid"')" 2
want "explore: heat map cells (2 x 2 points, two maps)" "$(count "$ex" 'class="cell"')" 8
# one key: the latency plot, where static, dyn, full and ideal draw one line (the legend says so)
ex1=$tmpdir/ex1.html
"$ROTOR" explore opt-1.3b --layers 1 --sweep hbm-bw=2,8 -o "$tmpdir/e1" --report "$ex1" >"$out" 2>"$err" ||
    bad "explore --report, one key: $(cat "$err")"
n=$(count "$ex1" 'class="coincide"')
[ "$n" -ge 1 ] && ok || bad "explore: no design said to coincide"
if grep -q 'class="coincide"[^>]*>dyn = static<' "$ex1"; then ok; else bad "explore: no 'dyn = static'"; fi
# ... and the same plot as an SVG file is well-formed XML, its rings included
n=$(${PYTHON3:-python3} -c 'import sys, xml.dom.minidom as m
print(sum(c.getAttribute("fill") == "none" for c in m.parse(sys.argv[1]).getElementsByTagName("circle")))' \
    "$tmpdir/e1-hbm-bw.svg" 2>&1)
[ "$n" -ge 2 ] 2>/dev/null && ok || bad "explore: the SVG's rings: $n"

# ---- the browser ----
browser=$(command -v chromium || command -v chromium-browser || true)
case "$ROTOR" in */san/*) san=1 ;; *) san=0 ;; esac
if [ -z "$browser" ]; then
    echo "cli_report: browser test skipped: chromium is not installed (apt-get install chromium; scripts/deps.sh test does)"
elif [ "$san" -eq 1 ]; then
    echo "cli_report: browser test skipped under the sanitizers (the pages are the same; the plain build's run loads them)"
else
    flags="--headless --disable-gpu --no-first-run --disable-dev-shm-usage --hide-scrollbars --user-data-dir=$tmpdir/profile"
    [ "$(id -u)" = 0 ] && flags="$flags --no-sandbox"
    # A test-only script, put before the page's CSP (which then still governs
    # everything after it): it records errors, console errors and CSP
    # violations, and after the load writes a verdict into the DOM: the SVGs
    # laid out at zero size, and what a reader sees of issue 46's report:
    # the batch in the header, the frontier charts, the energy section, the
    # heat map's colours, the tall charts (over 600 px) without an axis at
    # the top and the bottom.
    probe='<script>(function(){var bad=[];
window.addEventListener("error",function(e){bad.push("error "+e.message)});
document.addEventListener("securitypolicyviolation",function(e){bad.push("csp "+e.violatedDirective+" "+e.blockedURI)});
var ce=console.error;console.error=function(){bad.push("console "+Array.prototype.join.call(arguments," "));ce.apply(console,arguments)};
window.addEventListener("load",function(){setTimeout(function(){var s=document.querySelectorAll("svg"),z=0,t=0,c={};
for(var i=0;i<s.length;i++){var r=s[i].getBoundingClientRect();if(!(r.width>0)||!(r.height>0))z++;
if(s[i].height.baseVal.value>600)if(s[i].querySelectorAll("g.axis").length<2)t++}
var k=document.querySelectorAll("rect.core");for(var i=0;i<k.length;i++)c[k[i].getAttribute("fill")]=1;
var b=document.querySelector("tr[data-field=batch] td:last-child");
var p=document.createElement("pre");p.id="verdict";
p.textContent="VERDICT svgs="+s.length+" zero="+z+" problems="+bad.length+" batch="+(b?b.textContent:"none")+
" frontiers="+document.querySelectorAll("figure[data-kind=frontier]").length+
" energy="+document.querySelectorAll("section#energy table tr").length+" colours="+Object.keys(c).length+
" tall_without_axes="+t+" "+bad.join(" | ");
document.body.appendChild(p)},100)})})();</script>'
    # screenshot FILE: "WIDTHxHEIGHT distinct-bytes" of a PNG (its header, and the byte values of its
    # inflated rows: a blank or one-colour page has a handful, a drawn one hundreds)
    screenshot() {
        "$py" - "$1" <<'PY' 2>/dev/null || echo "unreadable"
import struct, sys, zlib
d = open(sys.argv[1], "rb").read()
assert d[:8] == b"\x89PNG\r\n\x1a\n"
w, h = struct.unpack(">II", d[16:24])
i, idat = 8, b""
while i < len(d):
    n, = struct.unpack(">I", d[i:i + 4]); kind = d[i + 4:i + 8]
    if kind == b"IDAT": idat += d[i + 8:i + 8 + n]
    i += 12 + n
print("%dx%d %d" % (w, h, len(set(zlib.decompress(idat)))))
PY
    }
    for page in bert:$bert opt:$opt l7:$l7 ex:$ex; do
        f=${page#*:}
        page=${page%%:*}
        svgs=$(count "$f" "<svg")
        # (the probe has no '&', which sub() would replace by the match)
        awk -v probe="$probe" '!done && /<head>/ { sub(/<head>/, "<head>" probe); done = 1 } { print }' "$f" \
            >"$tmpdir/probe-$page.html"
        # one launch: the DOM after the probe ran, and a screenshot of the page's first 1600 px
        timeout 60 "$browser" $flags --window-size=1200,1600 --virtual-time-budget=3000 --dump-dom \
            --screenshot="$tmpdir/$page.png" "file://$tmpdir/probe-$page.html" >"$tmpdir/dom-$page.html" \
            2>"$tmpdir/chromium-$page.err"
        v=$(grep -o '<pre id="verdict">[^<]*' "$tmpdir/dom-$page.html" | sed 's/^<pre id="verdict">//')
        case $page in
        bert) want_v="VERDICT svgs=$svgs zero=0 problems=0 batch=8 frontiers=7 energy=3 colours=*" ;;
        *) want_v="VERDICT svgs=$svgs zero=0 problems=0 *" ;;
        esac
        # shellcheck disable=SC2254
        case $v in
        $want_v" tall_without_axes=0 ") ok ;;
        *) bad "browser $page: '$v', want '$want_v tall_without_axes=0' ($(tail -n 3 "$tmpdir/chromium-$page.err"))" ;;
        esac
        if [ "$page" = bert ]; then
            n=$(echo "$v" | sed 's/.* colours=\([0-9]*\).*/\1/')
            [ "$n" -ge 2 ] 2>/dev/null && ok || bad "browser bert: the heat map shows $n colour(s)"
        fi
        shot=$(screenshot "$tmpdir/$page.png")
        n=${shot#* }
        if [ "${shot%% *}" = 1200x1600 ] && [ "$n" -ge 64 ] 2>/dev/null; then ok
        else bad "browser $page: screenshot '$shot', want 1200x1600 and not one colour"; fi
    done
fi

finish cli_report
