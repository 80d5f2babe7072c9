#!/bin/sh
# CLI tests of `rotor model`: listing, totals, grouping, JSON and errors.
# Run by `make test` as `ROTOR=build/rotor sh tests/cli_model.sh`.
. "$(dirname "$0")/lib.sh"

expect_out list "gemma2-27b" -- model --list
expect_out help "usage: rotor model MODEL" -- model --help
# the totals line: operators, weights (BERT-Large: 335,141,888)
expect_out bert-large "bert-large: 390 operators (75 vendor), 632 GFLOP, 335141888 weights" -- model bert-large --batch 8
expect_out llama2-70b "llama2-70b: 963 operators" -- model llama2-70b --seq 2048 --batch 32
expect_out decode-kv "kv cache 67.11 MB" -- model llama2-7b --decode --seq 1024 --batch 2 --layers 2
expect_out histogram "histogram: BatchNormalization 53, Conv 53, Relu 49, Add 17" -- model resnet-50
expect_out grouped "grouped: 22 operators into 13 (9 epilogues fused" -- model bert-base --layers 1 --group
expect_out fused "+ Add+Gelu" -- model bert-base --layers 1 --group
expect_out json '"format":"rotor-graph"' -- model nerf --json

expect_error unknown 2 "unknown model 'gpt-5' (the zoo has" -- model gpt-5
expect_error did-you-mean-model 2 "unknown model 'resnet50' (did you mean 'resnet-50'?) (the zoo has" -- model resnet50
expect_error did-you-mean-chip 2 "unknown chip 'ipu-mk3' (did you mean 'ipu-mk2'?)" -- compile bert-base --chip ipu-mk3
expect_error no-model 2 "a model is required" -- model
expect_error zero-batch 2 "--batch: expected an integer from 1 to 1048576, got '0'" -- model bert-base --batch 0
expect_error huge-seq 2 "--seq: expected an integer from 1 to 16777216, got '1000000000000000'" -- model bert-base --seq 1000000000000000
expect_error twice 2 "--batch given twice" -- model bert-base --batch 1 --batch 2
expect_error decode-encoder 2 "vit-base has no decode phase" -- model vit-base --decode
expect_error too-long 2 "seq 1024 exceeds the 512 learned positions" -- model bert-base --seq 1024

finish cli_model
