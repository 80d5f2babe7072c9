#!/bin/sh
# CLI tests of whole models on a 2D mesh (issue 41, docs/mesh.md): a program
# compiled for a mesh is read back and simulates as predicted, its setup is
# checked against its busiest link, rotor plan prints the layout, the VGM
# baseline is priced over the routes, and what the mesh does not price is
# refused in one line.
# Run by `make test` as `ROTOR=build/rotor sh tests/cli_mesh.sh`.
. "$(dirname "$0")/lib.sh"
mesh="--set cores_per_chip=256 --set topology=mesh --set mesh_width=16 --set mesh_height=16"
bert="bert-base --layers 1 --seq 32"
p=$tmpdir/p.json

"$ROTOR" compile $bert $mesh -o "$p" -q >"$out" 2>"$err" || bad "compile: $(cat "$err")"
# every data movement is priced over the routes: the replay of the file agrees
expect_out file-agrees "model [0-9.]* us: [+-]0.0[0-9]%" -- simulate "$p" $mesh -q
if grep -q '"setup_link_bytes"' "$p" && grep -q '"setup_hops"' "$p"; then ok; else bad "no mesh setup fields in $p"; fi
# a setup below what its busiest link must carry is refused, naming the field
"${PYTHON3:-/usr/bin/python3}" - "$p" "$tmpdir/low.json" <<'PY' || bad "python could not rewrite the program"
import json, sys
d = json.load(open(sys.argv[1]))
o = next(x for x in d["operators"] if x.get("setup_link_bytes", 0) > 0)
o["setup_s"] = 1e-12
json.dump(d, open(sys.argv[2], "w"))
PY
expect_error low-setup 2 "setup_s: 1e-12 s is below its busiest link's" -- simulate "$tmpdir/low.json" $mesh -q
# the setups' exchanges beside their busiest links' bound: the walk chose
# the plans by the bound, then the exchanges refined them, and the note
# says how far the schedule is from it;
# the bound rebuilt from the program's own fields (setup_link_bytes, setup_rounds,
# setup_hops at 5.5 GB/s and 1 ns a hop; docs/mesh.md, "Setup")
"$ROTOR" compile $bert $mesh --set link_latency_ns=1 -o "$tmpdir/n.json" >"$tmpdir/n.txt" 2>"$err" || bad "note: $(cat "$err")"
if "${PYTHON3:-/usr/bin/python3}" - "$tmpdir/n.json" "$tmpdir/n.txt" <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))
m = re.search(r"^note: the setups' exchanges take ([0-9.]+) us, ([0-9.]+)x what their busiest links bound "
              r"them to \(([0-9.]+) us\); the walk chose the plans by that bound, then each by the exchanges", open(sys.argv[2]).read(), re.M)
ops = [o for o in d["operators"] if not o["vendor"] and o["setup_bytes"] > 0]
setup = sum(o["setup_s"] for o in ops) * 1e6
bound = sum(o["setup_link_bytes"] / 5.5e9 + max(o["setup_rounds"], 1) * max(o["setup_hops"], 1) * 1e-9
            for o in ops) * 1e6
assert m and abs(float(m.group(1)) - setup) < 1e-3 and abs(float(m.group(3)) - bound) < 1e-3, (m and m.groups(), setup, bound)
assert setup > 1.25 * bound and abs(float(m.group(2)) - setup / bound) < 6e-3
assert abs(d["totals"]["setup_bound_s"] * 1e6 - bound) < 1e-9, d["totals"]
PY
then ok; else bad "setup note: $(grep note "$tmpdir/n.txt")"; fi
# the program's totals.setup_bound_s is checked on reading: a wrong one is
# refused, one on an all-to-all chip too, and a file without it (written
# before 2026-12-04) is read
"${PYTHON3:-/usr/bin/python3}" - "$tmpdir/n.json" "$tmpdir" <<'PY' || bad "python could not rewrite the program"
import json, sys
d = json.load(open(sys.argv[1]))
d["totals"]["setup_bound_s"] *= 1.01
json.dump(d, open(sys.argv[2] + "/bound-wrong.json", "w"))
del d["totals"]["setup_bound_s"]
json.dump(d, open(sys.argv[2] + "/bound-absent.json", "w"))
PY
expect_error bound-wrong 2 "totals.setup_bound_s: is not the sum of the operators' busiest links' bounds" -- simulate "$tmpdir/bound-wrong.json" $mesh --set link_latency_ns=1 -q
expect_out bound-absent "model [0-9.]* us: [+-]0.0[0-9]%" -- simulate "$tmpdir/bound-absent.json" $mesh --set link_latency_ns=1 -q
"$ROTOR" compile mlp-l -o "$tmpdir/a2a.json" -q >/dev/null 2>"$err" || bad "a2a: $(cat "$err")"
"${PYTHON3:-/usr/bin/python3}" - "$tmpdir/a2a.json" <<'PY' || bad "python could not rewrite the program"
import json, sys
d = json.load(open(sys.argv[1]))
assert "setup_bound_s" not in d["totals"]
d["totals"]["setup_bound_s"] = 0
json.dump(d, open(sys.argv[1], "w"))
PY
expect_error bound-a2a 2 "totals.setup_bound_s: is a mesh's; the chip has none" -- simulate "$tmpdir/a2a.json" -q
# where the exchanges come within a quarter of their bound (wormhole-n150's
# 8x9 mesh), no note
expect_out no-note "^total 4.528 us" -- compile mlp-l --chip wormhole-n150
if grep -q "^note" "$out"; then bad "no-note: $(grep note "$out")"; else ok; fi
expect_out layout "mesh layout .* of the 16x16 mesh" -- plan --expr 'C[m,n] += A[m,k] * B[k,n]' --dim m=512,k=512,n=512 $mesh
# the VGM baseline over the 16x16 mesh's routes (docs/vgm.md, "On a 2D mesh"):
# 177.500 us against 34.245 us on 256 all-to-all cores, pinned; one chip only
expect_out vgm "VGM baseline (Roller): total 177.500 us: compute 2.852, load 125.657, store 48.980" -- compile $bert $mesh --baseline vgm
expect_error vgm-chips 2 "topology mesh: the VGM baseline prices one chip's mesh, not 2 chips" -- compile $bert $mesh --set chips=2 --set interchip_gbps=100 --baseline vgm
# pipelined segments: bands of whole rows, moves over the mesh's routes (docs/kapla.md)
expect_out pipeline "^pipelined segments (objective latency): [0-9]*, [0-9]* stage plans searched$" -- compile $bert $mesh --pipeline
# the exact search on a wafer-sized chip: one line says it can take long, and
# that --solver fast exists; --solver fast and -q say nothing (a tiny model:
# its searches are quick even there)
tiny="$(dirname "$0")/../examples/tiny-cnn.onnx"
"$ROTOR" compile "$tiny" --chip wse2 >"$out" 2>"$err" || bad "wse2 exact: $(cat "$err")"
if [ "$(wc -l <"$err")" -eq 1 ] && grep -q "^rotor compile: note: wse2 has 745500 cores; the exact search can run for tens of minutes" "$err"; then ok; else bad "wse2 exact: stderr '$(cat "$err")'"; fi
"$ROTOR" compile "$tiny" --chip wse2 --solver fast >"$out" 2>"$err" || bad "wse2 fast: $(cat "$err")"
if [ -s "$err" ]; then bad "wse2 fast: stderr '$(cat "$err")'"; else ok; fi
"$ROTOR" compile "$tiny" --chip wse2 -q >"$out" 2>"$err" || bad "wse2 -q: $(cat "$err")"
if [ -s "$err" ]; then bad "wse2 -q: stderr '$(cat "$err")'"; else ok; fi
# a mesh with a side of 2 cores or fewer, where the replay measured shifts
# up to 2.9x slower than the busiest-link model (docs/mesh.md, "Narrow
# meshes"), says so in the text and the program; 16x16 says nothing
line="--set cores_per_chip=256 --set topology=mesh --set mesh_width=128 --set mesh_height=2"
# the header names the mesh's shape (an all-to-all chip keeps its cores alone)
expect_out header "^bert-base, batch 1, on ipu-mk2 (256 cores, mesh 16x16), plans by" -- compile $bert $mesh
expect_out narrow "^note: on a 128x2 mesh (a side of 2 cores or fewer) the replay measured shifts up to 2.9x slower" -- compile $bert $line
expect_out narrow-json '"caveat":	"on a 128x2 mesh' -- compile $bert $line --json
expect_out narrow-plan "^  note        on a 128x2 mesh" -- plan --expr 'C[m,n] += A[m,k] * B[k,n]' --dim m=512,k=512,n=512 $line
"$ROTOR" compile $bert $mesh --json >"$out" 2>"$err" || bad "wide json: $(cat "$err")"
if grep -q caveat "$out"; then bad "a 16x16 mesh carries a caveat"; else ok; fi
# --mesh-plans: the walk's plans (chosen by the setups' bound) against the
# plans the exchanges choose after it (docs/mesh.md, "Setup"), each noted
mk2m="--chip ipu-mk2-mesh"
expect_out bound-plans "^total 13.777 us" -- compile $bert $mk2m --mesh-plans bound
expect_out bound-note "; the plans were chosen by that bound (docs/mesh.md" -- compile $bert $mk2m --mesh-plans bound
expect_out refined-plans "^total 12.602 us" -- compile $bert $mk2m
expect_out refined-note "; the walk chose the plans by that bound, then each by the exchanges where another plan was faster (docs" -- compile $bert $mk2m --mesh-plans exchanges
expect_out bound-json '"mesh_plans":.*"bound"' -- compile $bert $mk2m --mesh-plans bound --json
expect_out refined-json '"mesh_plans":.*"exchanges"' -- compile $bert $mk2m --json
expect_out refined-moves '"mesh_moves":.*[1-9]' -- compile $bert $mk2m --json
expect_error mesh-plans-value 2 "--mesh-plans: expected exchanges or bound, got 'fast'" -- compile $bert $mk2m --mesh-plans fast
expect_error mesh-plans-a2a 2 "--mesh-plans: chip 'ipu-mk2' is not a mesh; its setups are not routed exchanges" -- compile $bert --mesh-plans bound
expect_error mesh-plans-gpu 2 "--mesh-plans: chip 'a100-80gb' is a GPU; it has no mesh" -- compile $bert --chip a100-80gb --mesh-plans bound
expect_error mesh-plans-vgm 2 "--mesh-plans: --baseline vgm chooses no T10 plans" -- compile $bert $mk2m --mesh-plans bound --baseline vgm
finish cli_mesh
