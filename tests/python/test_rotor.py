"""The Python package against the CLI (run by tests/cli_python.sh): each
function's dict equals what `rotor COMMAND --json` prints, an error raises
RotorError with the CLI's line, and `python3 -m rotor` works.  $ROTOR is the
CLI, $ROTOR_LIB the library the package loads."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

import rotor

ROTOR = os.environ.get("ROTOR", "build/rotor")
MM = "C[m,n] += A[m,k] * B[k,n]"
ENV = dict(os.environ, ROTOR_NO_CACHE="1")


def cli(*args):
    """`rotor ARGS --json` parsed, and the exact text."""
    r = subprocess.run([ROTOR, *args, "--json"], capture_output=True, text=True, env=ENV, check=True)
    return json.loads(r.stdout), r.stdout


def no_wall(d):
    """The search's wall time, the one figure that varies between runs."""
    d = json.loads(json.dumps(d))
    d.get("search", {}).pop("wall_s", None)
    return d


class Documents(unittest.TestCase):
    def test_plan_equals_cli(self):
        want, _ = cli("plan", "--expr", MM, "--dim", "m=32,k=64,n=16", "--threads", "1", "--pareto")
        got = rotor.plan(MM, dim="m=32,k=64,n=16", threads=1, pareto=True)
        self.assertEqual(no_wall(got), no_wall(want))
        self.assertEqual(got["format"], "rotor-plan")
        self.assertEqual(got["rotor_version"], rotor.__version__)
        self.assertGreater(len(got["pareto"]), 1)

    def test_compile_takes_set_as_a_string(self):
        d = rotor.compile("nerf-t10", set="cores_per_chip=64")
        self.assertEqual((d["cores"], d["rotor_version"]), (64, rotor.__version__))

    def test_plan_of_the_t10_benchmark(self):
        # the acceptance line's figure: the T10 benchmark MatMul on one IPU
        got = rotor.plan(MM, dim="m=32,k=5120,n=15360", chip="ipu-mk2")
        self.assertAlmostEqual(got["time"]["total_s"], 2.0888727924363636e-05, delta=1e-18)

    def test_compile_equals_cli_byte_for_byte(self):
        _, text = cli("compile", "nerf-t10", "--batch", "2", "--compare", "--set", "cores_per_chip=736")
        got = rotor.document("compile", model="nerf-t10", batch=2, compare=True, set=["cores_per_chip=736"])
        self.assertEqual(got + "\n", text)
        d = json.loads(got)
        self.assertEqual(d["cores"], 736)
        self.assertIn("comparison", d)

    def test_simulate_equals_cli(self):
        want, _ = cli("simulate", "nerf-t10", "--chip", "ipu-mk2-mesh")
        got = rotor.simulate("nerf-t10", chip="ipu-mk2-mesh")
        self.assertEqual(got, want)
        self.assertEqual(got["format"], "rotor-simulation")

    def test_schedule_equals_cli_byte_for_byte(self):
        _, text = cli("schedule", "llama2-13b", "--layers", "1", "--design", "full,basic", "--per-op", "--tp", "2")
        got = rotor.document("schedule", model="llama2-13b", layers=1, design="full,basic", per_op=True, tp=2)
        self.assertEqual(got + "\n", text)
        d = rotor.schedule("llama2-13b", layers=1, design="full", hbm_bw=8)
        self.assertEqual([x["design"] for x in d["designs"]], ["full"])
        self.assertEqual(d["hbm_gbps_per_chip"], 2000)  # 8 TB/s over ipu-pod4's 4 chips

    def test_graphturbo_compile_equals_cli_byte_for_byte(self):
        # a chip with a global buffer: the five steps and §5.1's loops (docs/graphturbo.md)
        _, text = cli("compile", "bert-large", "--seq", "128", "--batch", "8", "--chip", "stcp920", "--group",
                      "graphturbo")
        got = rotor.document("compile", model="bert-large", seq=128, batch=8, chip="stcp920", group="graphturbo")
        self.assertEqual(got + "\n", text)
        d = json.loads(got)
        self.assertEqual(d["format"], "rotor-graphturbo")
        g = {s["step"]: s for s in d["loops"]["steps"]}["graphturbo"]
        self.assertEqual((g["passes"], g["batch_per_pass"], g["tensors"]["ddr"], g["tensors"]["inputs"]), (2, 4, 1, 1))
        # one pass only, as --no-loops
        want, _ = cli("compile", "resnet-18", "--batch", "4", "--chip", "stcp920", "--group", "graphturbo", "--no-loops")
        got = rotor.compile("resnet-18", batch=4, chip="stcp920", group="graphturbo", no_loops=True)
        self.assertEqual(got, want)
        self.assertNotIn("loops", got)

    def test_graphturbo_values_equal_cli_byte_for_byte(self):
        # where the graphturbo step keeps each value, in the pass the loops chose
        _, text = cli("compile", "resnet-50", "--batch", "16", "--chip", "stcp920", "--group", "graphturbo",
                      "--values")
        got = rotor.document("compile", model="resnet-50", batch=16, chip="stcp920", group="graphturbo", values=True)
        self.assertEqual(got + "\n", text)
        v = json.loads(got)["values"]
        self.assertEqual([r["value"] for r in v["rows"] if r["level"] == "DDR"],
                         ["s1.b3.relu", "s2.b0.conv3.bn", "fc.biased"])
        with self.assertRaisesRegex(rotor.RotorError, "--values: ipu-mk2 has no global buffer"):
            rotor.compile("resnet-18", chip="ipu-mk2", group="graphturbo", values=True)
        with self.assertRaisesRegex(rotor.RotorError, "--values applies to --group graphturbo"):
            rotor.compile("resnet-18", chip="stcp920", values=True)

    def test_graphturbo_simulate_equals_cli_byte_for_byte(self):
        _, text = cli("simulate", "mobilenet-v2", "--batch", "32", "--chip", "stcp920", "--group", "graphturbo")
        got = rotor.document("simulate", model="mobilenet-v2", batch=32, chip="stcp920", group="graphturbo")
        self.assertEqual(got + "\n", text)
        d = json.loads(got)
        self.assertEqual(d["format"], "rotor-graphturbo-sim")
        # the gb and lb steps replayed in the 16 passes of 2 compile chose (docs/simulator.md, "Agreement")
        self.assertEqual([x["passes"] for x in d["loops"]], [1, 16, 16, 1, 1])

    def test_graphturbo_without_a_global_buffer_equals_cli(self):
        # ipu-mk2: T10's schedule with sub-graphs as instances on core groups, compiled and replayed
        _, text = cli("compile", "resnet-18", "--batch", "2", "--group", "graphturbo")
        got = rotor.document("compile", model="resnet-18", batch=2, group="graphturbo", no_loops=True)
        self.assertEqual(got + "\n", text)
        d = json.loads(got)
        self.assertEqual((d["format"], len(d["subgraphs"])), ("rotor-graphturbo-icca", 1))
        want, _ = cli("simulate", "resnet-18", "--batch", "2", "--group", "graphturbo")
        got = rotor.simulate("resnet-18", batch=2, group="graphturbo")
        self.assertEqual(got, want)
        self.assertEqual(got["format"], "rotor-graphturbo-icca-sim")

    def explore_cli(self, *args):
        """`rotor explore ARGS --json` run in a scratch directory (it writes its
        CSV and SVGs there); the document without "csv" and "svg", the files
        it names, which rotor.explore does not write."""
        with tempfile.TemporaryDirectory() as tmp:
            r = subprocess.run([os.path.abspath(ROTOR), "explore", *args, "--json"], capture_output=True, text=True,
                               env=ENV, cwd=tmp, check=True)
        d = json.loads(r.stdout)
        self.assertTrue(d.pop("csv").endswith(".csv"))
        self.assertGreater(len(d.pop("svg")), 0)
        return d

    def test_explore_equals_cli(self):
        # docs/explore.md's 2 x 2 grid, as a dict of lists
        want = self.explore_cli("llama2-13b", "--layers", "2", "--sweep", "hbm-bw=4,8", "--sweep", "noc-bw=2.75,5.5")
        got = rotor.explore("llama2-13b", {"hbm-bw": [4, 8], "noc-bw": [2.75, 5.5]}, layers=2)
        self.assertEqual(got, want)
        self.assertEqual((got["format"], got["rotor_version"]), ("rotor-explore", rotor.__version__))
        self.assertEqual([p["values"] for p in got["points"]],
                         [{"hbm-bw": 4, "noc-bw": 2.75}, {"hbm-bw": 4, "noc-bw": 5.5},
                          {"hbm-bw": 8, "noc-bw": 2.75}, {"hbm-bw": 8, "noc-bw": 5.5}])
        self.assertNotIn("csv", got)

    def test_explore_zip_and_a_point_that_does_not_fit(self):
        want = self.explore_cli("llama2-13b", "--layers", "2", "--sweep", "hbm-bw=4,8,16", "--sweep",
                                "flops=125,250,500", "--zip", "--design", "full")
        got = rotor.explore("llama2-13b", ["hbm-bw=4,8,16", "flops=125,250,500"], zip=True, design="full", layers=2)
        self.assertEqual(got, want)
        self.assertEqual(len(got["points"]), 3)
        # cores=64 has too little SRAM for llama2-13b's layers: that point is skipped, with why
        want = self.explore_cli("llama2-13b", "--layers", "2", "--sweep", "cores=64,1472")
        got = rotor.explore("llama2-13b", "cores=64,1472", layers=2)
        self.assertEqual(got, want)
        self.assertEqual([p["fits"] for p in got["points"]], [False, True])
        self.assertRegex(got["points"][0]["error"], "no valid plan fits")


class Errors(unittest.TestCase):
    def test_error_is_the_cli_line(self):
        r = subprocess.run([ROTOR, "plan", "--expr", MM, "--dim", "m=32,k=64", "--json"], capture_output=True,
                           text=True, env=ENV)
        self.assertEqual(r.returncode, 2)
        with self.assertRaises(rotor.RotorError) as c:
            rotor.plan(MM, dim="m=32,k=64")
        self.assertEqual("rotor plan: %s\n" % c.exception, r.stderr)
        self.assertEqual(str(c.exception), "--expr: column 5: axis 'n' has no extent (add n=N to --dims)")

    def test_unknown_option_and_model(self):
        with self.assertRaisesRegex(rotor.RotorError, "^options: unknown option 'batchsize' for compile"):
            rotor.compile("bert-large", batchsize=8)
        with self.assertRaisesRegex(rotor.RotorError, "^--batch: expected an integer from 1 to 1048576, got 0$"):
            rotor.compile("bert-large", batch=0)
        with self.assertRaisesRegex(rotor.RotorError, "bert-larg"):
            rotor.compile("bert-larg")
        with self.assertRaisesRegex(rotor.RotorError, r"^--tp: expected 1\.\.4 \(the chips of ipu-pod4\), got 8$"):
            rotor.schedule("llama2-13b", tp=8)

    def test_a_gpu_chip_is_refused_in_words_that_say_where_it_is_modelled(self):
        for call in (lambda: rotor.plan("C[m,n] += A[m,k] * B[k,n]", dim="m=512,k=768,n=3072", chip="a100-80gb"),
                     lambda: rotor.compile("resnet-18", chip="a100-80gb")):
            with self.assertRaisesRegex(rotor.RotorError, r"^chip 'a100-80gb' is a GPU: rotor_doc \(and the Python "
                                        r"package\) models none; the command line's rotor plan and rotor compile do"):
                call()

    def test_group_errors_are_the_cli_lines(self):
        with self.assertRaisesRegex(rotor.RotorError, r"^--group: expected fused, none or graphturbo, got 'turbo'$"):
            rotor.compile("resnet-18", group="turbo")
        with self.assertRaisesRegex(rotor.RotorError, r"^--no-loops applies to --group graphturbo "):
            rotor.simulate("resnet-18", no_loops=True)
        with self.assertRaisesRegex(rotor.RotorError, r"it conflicts with --compare$"):
            rotor.compile("resnet-18", group="graphturbo", compare=True)
        with self.assertRaisesRegex(rotor.RotorError, r"^--group graphturbo replays GraphTurbo's schedules: it conflicts with --solver$"):
            rotor.simulate("resnet-18", group="graphturbo", solver="fast")
        with self.assertRaisesRegex(rotor.RotorError, r"^options: unknown option 'group' for schedule"):
            rotor.schedule("llama2-13b", group="graphturbo")

    def test_explore_errors_are_the_cli_lines(self):
        with self.assertRaisesRegex(rotor.RotorError, r"^--sweep: unknown key 'hbm-b' \(did you mean 'hbm-bw'\?\) \(keys: hbm-bw, "):
            rotor.explore("llama2-13b", {"hbm-b": [4]})
        with self.assertRaisesRegex(rotor.RotorError, r"^--sweep hbm-bw given twice \(one list per key\)$"):
            rotor.explore("llama2-13b", ["hbm-bw=4", "hbm-bw=8"])
        with self.assertRaisesRegex(rotor.RotorError, r"^--batch and --sweep batch: give one$"):
            rotor.explore("llama2-13b", {"batch": [1, 2]}, batch=2)
        with self.assertRaises(rotor.RotorError) as c:
            rotor.explore("llama2-13b", {"cores": [64, 65]}, layers=2)
        self.assertEqual(c.exception.status, 2)  # ROTOR_ERR_NOFIT: no point fits
        self.assertRegex(str(c.exception), "^--sweep cores: no point fits; at cores=64: ")

    def test_no_fit_status(self):
        with self.assertRaises(rotor.RotorError) as c:
            rotor.plan(MM, dim="m=32,k=64,n=16", constraints="memory_cap=1")
        self.assertEqual(c.exception.status, 2)  # ROTOR_ERR_NOFIT


class Main(unittest.TestCase):
    def run_main(self, *args):
        return subprocess.run([sys.executable, "-m", "rotor", *args], capture_output=True, text=True, env=ENV)

    def test_version(self):
        r = self.run_main("--version")
        want = subprocess.run([ROTOR, "--version"], capture_output=True, text=True).stdout
        self.assertEqual((r.returncode, r.stdout), (0, want))

    def test_plan_prints_the_document(self):
        r = self.run_main("plan", "--expr", MM, "--dim", "m=32,k=64,n=16", "--threads", "1")
        self.assertEqual(r.returncode, 0, r.stderr)
        want, _ = cli("plan", "--expr", MM, "--dim", "m=32,k=64,n=16", "--threads", "1")
        self.assertEqual(no_wall(json.loads(r.stdout)), no_wall(want))

    def test_explore_prints_the_document(self):
        r = self.run_main("explore", "llama2-13b", "--layers", "2", "--sweep", "cores=736,1472", "--design", "full")
        self.assertEqual(r.returncode, 0, r.stderr)
        d = json.loads(r.stdout)
        self.assertEqual([p["values"]["cores"] for p in d["points"]], [736, 1472])
        self.assertEqual(d["designs"], ["full"])

    def test_error_exit(self):
        r = self.run_main("compile", "bert-large", "--batch", "0")
        self.assertEqual((r.returncode, r.stdout), (2, ""))
        self.assertEqual(r.stderr, "rotor compile: --batch: expected an integer from 1 to 1048576, got 0\n")


if __name__ == "__main__":
    unittest.main()
