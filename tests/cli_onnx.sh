#!/bin/sh
# CLI tests of ONNX import through `rotor model` and `rotor compile`
# (docs/onnx.md): the real files of ../shared/onnx, the bad ones, and every
# model of Debian's libonnx-testdata, each imported or refused in one line.
# Run by `make test` as `ROTOR=build/rotor sh tests/cli_onnx.sh`.
. "$(dirname "$0")/lib.sh"
SHARED=../shared/onnx
TESTDATA=/usr/share/libonnx-testdata/data

expect_out help "--dim k=v" -- model --help
expect_error zoo-dim 2 "--dim, --input and --value shape ONNX files" -- model bert-base --dim batch=2
expect_error onnx-batch 2 "bind an ONNX file's dimensions with --dim" -- model x.onnx --batch 2
expect_error missing 2 "no/such.onnx: No such file or directory" -- model no/such.onnx

if [ -d "$SHARED/real" ]; then
    expect_out mnist "mnist: 11 operators (2 vendor), 0.001603 GFLOP, 5994 weights" -- model "$SHARED/real/mnist.onnx"
    expect_out resnet50 "light_resnet50: 178 operators (1 vendor), 8.217 GFLOP, 25610152 weights" -- \
        model "$SHARED/real/light_resnet50.onnx"
    expect_out bert-toy "12 spelled-out LayerNorms matched" -- \
        model "$SHARED/real/bert_toy_optimized.onnx" --dim batch=2,max_seq_len_in_batch=16
    expect_out bert-toy-group "grouped: 237 operators into 107" -- \
        model "$SHARED/real/bert_toy_optimized.onnx" --dim batch=2,max_seq_len_in_batch=16 --group
    expect_out gpt2-past "gpt2_past: 707 operators" -- model "$SHARED/real/gpt2_past.onnx" --dim batch_size=2,seq_len=4
    expect_out distilbert "attention_distilbert: 27 operators" -- \
        model "$SHARED/real/attention_distilbert.onnx" --input input_1=1x3x8
    expect_error distilbert-declared 2 "node 'reshape_x' (op Reshape, domain ai.onnx): cannot reshape 3 elements into 1" -- \
        model "$SHARED/real/attention_distilbert.onnx"
    expect_error unbound 2 "dimension 0 is symbolic ('batch'): bind it with --dim batch=N" -- \
        model "$SHARED/real/bert_toy_optimized.onnx"
    expect_out json '"format":"rotor-graph"' -- model "$SHARED/real/mnist.onnx" --json
    expect_out compile "T10 over VGM" -- compile "$SHARED/real/hello_deepa.onnx" --compare
    for f in "$SHARED"/bad/*.onnx; do
        expect_error "bad $(basename "$f")" 2 "rotor model: $f: " -- model "$f"
    done
else
    echo "cli_onnx.sh: $SHARED is absent; real and bad files skipped"
fi

# Every operator-test model of libonnx-testdata imports (exit 0) or is refused
# with one line naming the file (exit 2); nothing else is allowed.  Under the
# sanitizers one model in 8 (the counts are checked in the plain build): a
# process there costs 0.1 s of ASan's start and exit whatever it does, and
# the unit test onnxshape/every_imported_testdata_output_has_its_reference_
# shape_and_type imports every one of them in one process under ASan already.
case $ROTOR in
*/san/*) stride=8 ;;
*) stride=1 ;;
esac
if [ -d "$TESTDATA" ]; then
    imported=0 refused=0 total=0 k=0
    for f in "$TESTDATA"/*/*/model.onnx; do
        k=$((k + 1))
        [ $((k % stride)) -eq 0 ] || [ "$stride" -eq 1 ] || continue
        total=$((total + 1))
        "$ROTOR" model "$f" >/dev/null 2>"$err"
        rc=$?
        if [ "$rc" -eq 0 ]; then
            imported=$((imported + 1))
        elif [ "$rc" -eq 2 ] && [ "$(wc -l <"$err")" -eq 1 ] && grep -q "^rotor model: $f: " "$err"; then
            refused=$((refused + 1))
        else
            bad "testdata $f: exit $rc: $(head -c 300 "$err")"
        fi
    done
    echo "cli_onnx.sh: libonnx-testdata: $total models, $imported imported, $refused refused"
    if [ "$stride" -gt 1 ]; then [ "$total" -eq $((1072 / stride)) ] && ok || bad "testdata: $total models, want $((1072 / stride))"
    elif [ "$total" -eq 1072 ] && [ "$imported" -eq 902 ]; then ok; else bad "testdata counts changed"; fi
    # ConvTranspose's output shapes as the ONNX tests give them (issue 20:
    # auto_pad SAME was ignored, 1x2x7x7 where the file says 1x2x6x6)
    for c in autopad_same:1x2x6x6 "":1x2x5x5 pads:1x2x7x3 output_shape:1x2x10x8 dilations:1x1x5x5 \
        kernel_shape:1x2x10x8 1d:1x2x5 3d:1x2x5x6x7; do
        t=${c%%:*} want=${c#*:}
        expect_out "convtranspose${t:+_$t}" "ConvTranspose  *$want " -- model "$TESTDATA/node/test_convtranspose${t:+_$t}/model.onnx"
    done
    # --value gives a shape input its value: from the test's own data, or typed
    rs=$TESTDATA/node/test_reshape_negative_dim
    expect_error value-needed 2 "shape 'shape' is a graph input; rotor needs its value to know the shapes (give it with --value shape=...)" -- model "$rs/model.onnx"
    expect_out value-file "Reshape  *2x6x2 " -- model "$rs/model.onnx" --value "shape=$rs/test_data_set_0/input_1.pb"
    expect_out value-list "Reshape  *2x6x2 " -- model "$rs/model.onnx" --value shape=2,-1,2
    expect_error value-unknown 2 "--value: 'shapes' is not an input of the graph" -- model "$rs/model.onnx" --value shapes=1
else
    bad "$TESTDATA is absent (apt-get install libonnx-testdata)"
fi

finish cli_onnx
