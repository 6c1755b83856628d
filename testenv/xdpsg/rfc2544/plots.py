# SPDX-License-Identifier: GPL-2.0
"""The RFC 2544 charts, drawn by gnuplot as bench/plot draws them: throughput, latency at
the throughput rate, frame loss rate. Each PNG is written to a temporary name and renamed."""

import os
import shutil
import subprocess
import tempfile


GP_HEAD = '''set terminal pngcairo size 900,520 font "DejaVu Sans,10"
set output "%s"
set termoption noenhanced
set datafile missing "-"
set grid
'''


def throughput_jobs(r, tmp, title):
    """The throughput bars and the latency percentiles at each size's throughput rate."""
    tps = r["throughput"]
    if not tps:
        return []
    d = os.path.join(tmp, "tp.dat")
    with open(d, "w") as f:
        for t in tps:
            f.write('"%d B" %.4f\n' % (t["size"], t["throughput_pps"] / 1e6))
    gp = ('set style data histogram\nset style fill solid 0.8 border -1\nset boxwidth 0.8\n'
          'set yrange [0:*]\nset ylabel "Mpps"\nunset key\n'
          'set title "RFC 2544 throughput (loss ratio <= %g)\\n%s"\n'
          "plot '%s' using 2:xtic(1)\n" % (r["loss_ratio"], title, d))
    jobs = [("rfc2544-throughput.png", gp)]
    lat = [t for t in tps if t["latency_ns"]]
    if lat:
        d = os.path.join(tmp, "lat.dat")
        keys = [("min", "min"), ("p50", "p50"), ("p90", "p90"), ("p99", "p99"),
                ("p999", "p99.9"), ("max", "max")]
        with open(d, "w") as f:
            for i, (k, lab) in enumerate(keys):
                f.write('%d "%s" %s\n' % (i, lab, " ".join(
                    "%.3f" % (t["latency_ns"][k] / 1e3) if t["latency_ns"].get(k) else "-"
                    for t in lat)))
        gp = ('set logscale y\nset key outside right\nset ylabel "send to receive (us, log)"\n'
              'set xlabel "percentile"\nset title "latency at the throughput rate\\n%s"\n' % title)
        gp += "plot " + ", ".join("'%s' using 1:%d:xtic(2) with linespoints lw 2 title '%d B'"
                                  % (d, 3 + i, t["size"]) for i, t in enumerate(lat)) + "\n"
        jobs.append(("rfc2544-latency.png", gp))
    return jobs


def loss_jobs(r, tmp, title):
    """The frame loss rate against the offered load, a line per size."""
    loss = [L for L in r["loss"] if any(not x.get("skipped") for x in L["rows"])]
    if not loss:
        return []
    d = os.path.join(tmp, "loss.dat")
    with open(d, "w") as f:
        for i, L in enumerate(loss):
            if i:
                f.write("\n\n")
            for x in L["rows"]:
                if not x.get("skipped") and not x["shortfall"]:
                    f.write("%g %.4f\n" % (x["pct"], x["loss_pct"]))
    gp = ('set key outside right\nset xlabel "offered load (%% of the maximum rate)"\n'
          'set ylabel "frame loss (%%)"\nset yrange [0:*]\n'
          'set title "RFC 2544 frame loss rate\\n%s"\n' % title)
    gp += "plot " + ", ".join("'%s' index %d using 1:2 with linespoints lw 2 title '%d B'"
                              % (d, i, L["size"]) for i, L in enumerate(loss)) + "\n"
    return [("rfc2544-loss.png", gp)]


def render(name, gp, outdir, log):
    """OUTDIR/NAME drawn by the gnuplot script GP; its path, or None (said through LOG)."""
    final = os.path.join(outdir, name)
    fd, tmpf = tempfile.mkstemp(prefix="." + name + ".", dir=outdir)
    os.close(fd)
    try:
        p = subprocess.run(["gnuplot"], input=GP_HEAD % tmpf + gp, capture_output=True,
                           text=True, timeout=120)
        if p.returncode != 0:
            log(f"gnuplot failed for {name}: {p.stderr.strip()[:200]}")
            return None
        os.chmod(tmpf, 0o644)
        os.replace(tmpf, final)
        return final
    except subprocess.TimeoutExpired:
        log(f"gnuplot did not finish {name} in 120 s")
        return None
    finally:
        if os.path.exists(tmpf):
            os.unlink(tmpf)


def plots(r, outdir, log):
    """The charts of result R in OUTDIR: their paths (none without gnuplot)."""
    if not shutil.which("gnuplot"):
        log("gnuplot not installed: no PNG charts (apt-get install gnuplot-nox)")
        return []
    tmp = tempfile.mkdtemp(prefix="xdpsg-rfc2544-plot-")
    try:
        title = r["where"].replace('"', "'")
        jobs = throughput_jobs(r, tmp, title) + loss_jobs(r, tmp, title)
        made = [render(name, gp, outdir, log) for name, gp in jobs]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return [m for m in made if m]
