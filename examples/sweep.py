"""A sweep in Python (docs/python.md): the T10 benchmark MatMul planned on
an IPU with more and more cores, the fastest plan's time and F_op each."""
import rotor

MM = "C[m,n] += A[m,k] * B[k,n]"
print("cores   time (us)   F_op")
for cores in (368, 736, 1472):
    d = rotor.plan(MM, dim="m=32,k=5120,n=15360", chip="ipu-mk2", set=f"cores_per_chip={cores}")
    fop = " ".join(f"{a}={f}" for a, f in d["plan"]["F_op"].items())
    print(f"{cores:5d} {d['time']['total_s'] * 1e6:11.3f}   {fop}")
