#!/bin/sh
# CLI tests of `rotor report` and `rotor explore --report` (docs/report.md).
# The pages' structure: every section, one frontier chart per operator with
# plans and its chosen plan marked, two time bars per operator (T10, VGM),
# one heat-map cell per core of the chip, one timeline row per scheduled
# operator, one breakdown bar per design, a heat map of explore's grid; sections
# that do not apply say so; no reference outside the file; the same bytes
# twice.  Then, when Debian's chromium is installed, each page in a real
# headless browser: no script error, console error or Content-Security-
# Policy violation, every chart's SVG laid out at a non-zero size, and a
# screenshot clearly larger than a blank page's of the same size.
# Small models only (bert-base and opt-1.3b with --layers 1: a second each).
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

# ---- bert-base on ipu-mk2: the compile, the replay, no HBM ----
bert=$tmpdir/bert.html
"$ROTOR" report bert-base --layers 1 -o "$bert" >"$out" 2>"$err" || bad "report bert-base: $(cat "$err")"
if grep -q "rotor report: wrote $bert" "$out"; then ok; else bad "report: stdout $(cat "$out")"; fi
check_page bert "$bert"
for id in summary frontiers algorithm1 op-times heatmap timeline breakdown sweeps; do
    if grep -q "<section id=\"$id\">" "$bert"; then ok; else bad "bert: no section $id"; fi
done
"$ROTOR" compile bert-base --layers 1 --json >"$tmpdir/prog.json" 2>"$err" || bad "compile: $(cat "$err")"
ops=$(grep -c '"vendor":' "$tmpdir/prog.json")
exprs=$(grep -c '"vendor":[[:space:]]*false' "$tmpdir/prog.json")
[ "$exprs" -gt 0 ] && [ "$ops" -gt "$exprs" ] || bad "prog.json: $ops operators, $exprs with plans"
want "bert: frontier charts (one per operator with plans)" "$(count "$bert" 'data-kind="frontier"')" "$exprs"
want "bert: frontier svgs" "$(count "$bert" '<svg xmlns="http://www.w3.org/2000/svg" class="frontier"')" "$exprs"
want "bert: chosen plans marked" "$(count "$bert" 'class="chosen"')" "$exprs"
want "bert: operator bars (T10 and VGM)" "$(count "$bert" '<g class="bar">')" $((2 * ops))
want "bert: heat-map cells (ipu-mk2: 1472 cores)" "$(count "$bert" 'class="core"')" 1472
want "bert: Algorithm 1 plots" "$(count "$bert" 'data-kind="algorithm1"')" 1
# no HBM: the timeline and the breakdown say why instead of a chart
want "bert: sections that say why not" "$(grep -c '<p class="na">The chip has no HBM' "$bert")" 2
want "bert: no timeline" "$(count "$bert" 'data-kind="timeline"')" 0
"$ROTOR" report bert-base --layers 1 -o "$tmpdir/bert2.html" >/dev/null 2>&1
if cmp -s "$bert" "$tmpdir/bert2.html"; then ok; else bad "bert: two runs differ"; fi

# ---- opt-1.3b on ipu-pod4: every section, the schedule too ----
opt=$tmpdir/opt.html
"$ROTOR" report opt-1.3b --layers 1 --chip ipu-pod4 -o "$tmpdir" >"$out" 2>"$err" || bad "report opt: $(cat "$err")"
mv "$tmpdir/opt-1.3b-report.html" "$opt" 2>/dev/null || bad "report -o DIR: no opt-1.3b-report.html"
check_page opt "$opt"
"$ROTOR" schedule opt-1.3b --layers 1 --json >"$tmpdir/sched.json" 2>"$err" || bad "schedule: $(cat "$err")"
sops=$(grep '"operators":' "$tmpdir/sched.json" | head -n 1 | tr -dc 0-9)
want "opt: timeline rows (one per scheduled operator)" "$(count "$opt" '<g class="op">')" "$sops"
n=$(count "$opt" 'class="preload"')
[ "$n" -gt 0 ] && [ "$n" -le "$sops" ] && ok || bad "opt: $n preloads drawn for $sops operators"
want "opt: timelines" "$(count "$opt" 'data-kind="timeline"')" 1
want "opt: breakdown" "$(count "$opt" 'data-kind="breakdown"')" 1
want "opt: heat-map cells (ipu-pod4: 4 x 1472 cores)" "$(count "$opt" 'class="core"')" 5888
want "opt: only the sweeps section says why not" "$(count "$opt" '<p class="na">')" 1
n=$(awk '/data-kind="breakdown"/,/<\/figure>/' "$opt" | grep -c '<g class="bar">')
want "opt: breakdown bars (6 designs)" "$n" 6

# ---- llama2-7b on ipu-pod4: too big for SRAM, scheduled from HBM ----
l7=$tmpdir/l7.html
"$ROTOR" report llama2-7b --chip ipu-pod4 -o "$l7" >"$out" 2>"$err" || bad "report llama2-7b: $(cat "$err")"
check_page llama "$l7"
want "llama: compile sections that say why not" "$(grep -c '<p class="na">[^<]*does not fit in 638976 bytes of SRAM' "$l7")" 4
want "llama: frontiers" "$(count "$l7" 'data-kind="frontier"')" 0
want "llama: timelines" "$(count "$l7" 'data-kind="timeline"')" 1
# ... and without HBM there is nothing to report: exit 1, one line, no file
expect_error llama-mk2 1 "rotor report: the model does not fit in 638976 bytes of SRAM" -- report llama2-7b -o "$tmpdir/n.html"
if [ -e "$tmpdir/n.html" ]; then bad "llama-mk2 left a file"; else ok; fi

# ---- explore --report: a grid of two keys, its heat maps ----
ex=$tmpdir/ex.html
"$ROTOR" explore opt-1.3b --layers 1 --sweep hbm-bw=2,8 --sweep noc-bw=4,8 -o "$tmpdir/e" --report "$ex" >"$out" 2>"$err" ||
    bad "explore --report: $(cat "$err")"
check_page explore "$ex"
# latency and, the preset pricing energy (docs/energy.md), energy
want "explore: heat maps" "$(count "$ex" 'data-kind="grid"')" 2
want "explore: heat map cells (2 x 2 points, two maps)" "$(count "$ex" 'class="cell"')" 8

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
    # violations, and after the load writes a verdict into the DOM.
    probe='<script>(function(){var bad=[];
window.addEventListener("error",function(e){bad.push("error "+e.message)});
document.addEventListener("securitypolicyviolation",function(e){bad.push("csp "+e.violatedDirective+" "+e.blockedURI)});
var ce=console.error;console.error=function(){bad.push("console "+Array.prototype.join.call(arguments," "));ce.apply(console,arguments)};
window.addEventListener("load",function(){setTimeout(function(){var s=document.querySelectorAll("svg"),z=0;
for(var i=0;i<s.length;i++){var r=s[i].getBoundingClientRect();if(!(r.width>0)||!(r.height>0))z++}
var p=document.createElement("pre");p.id="verdict";
p.textContent="VERDICT svgs="+s.length+" zero="+z+" problems="+bad.length+" "+bad.join(" | ");
document.body.appendChild(p)},100)})})();</script>'
    printf '<!DOCTYPE html>\n<html><head><meta charset="utf-8"></head><body></body></html>\n' >"$tmpdir/blank.html"
    timeout 60 "$browser" $flags --window-size=1200,1600 --screenshot="$tmpdir/blank.png" "file://$tmpdir/blank.html" \
        >/dev/null 2>&1
    for page in bert opt l7 ex; do
        f=$tmpdir/$page.html
        svgs=$(count "$f" "<svg")
        # (the probe has no '&', which sub() would replace by the match)
        awk -v probe="$probe" '!done && /<head>/ { sub(/<head>/, "<head>" probe); done = 1 } { print }' "$f" \
            >"$tmpdir/probe-$page.html"
        timeout 60 "$browser" $flags --window-size=1200,1600 --virtual-time-budget=3000 --dump-dom \
            "file://$tmpdir/probe-$page.html" >"$tmpdir/dom-$page.html" 2>"$tmpdir/chromium-$page.err"
        v=$(grep -o '<pre id="verdict">[^<]*' "$tmpdir/dom-$page.html" | sed 's/^<pre id="verdict">//')
        if [ "$v" = "VERDICT svgs=$svgs zero=0 problems=0 " ]; then ok
        else bad "browser $page: '$v', want $svgs svgs, none of zero size, no problems ($(tail -n 3 "$tmpdir/chromium-$page.err"))"; fi
        timeout 60 "$browser" $flags --window-size=1200,1600 --screenshot="$tmpdir/$page.png" "file://$f" >/dev/null 2>&1
        shot=$(wc -c <"$tmpdir/$page.png" 2>/dev/null || echo 0)
        blank=$(wc -c <"$tmpdir/blank.png" 2>/dev/null || echo 0)
        if [ "$blank" -gt 0 ] && [ "$shot" -gt $((blank * 4)) ]; then ok
        else bad "browser $page: screenshot of $shot bytes, a blank page's $blank: blank?"; fi
    done
fi

finish cli_report
