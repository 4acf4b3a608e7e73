"""The guarded console: a stream whose reader is gone neither raises nor swallows what is
written to it, and a run in progress hears of the loss and stops."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import textwrap

from lakecompat.harness.run.console import Console


def test_a_write_to_a_pipe_without_its_reader_goes_to_the_other_stream() -> None:
    read, write = os.pipe()
    os.close(read)  # the reader is gone, as `tee` after Ctrl-C
    errors = io.StringIO()
    console = Console(os.fdopen(write, "w"), errors)
    heard: list[str] = []
    with console.listening(heard.append):
        console.stdout.write("summary line\n")
        console.stdout.write("report: reports/runs/x/matrix.html\n")
        console.stdout.flush()
    assert errors.getvalue() == "summary line\nreport: reports/runs/x/matrix.html\n"
    assert heard == ["stdout"]  # once
    assert console.stdout.lost and not console.stdout.isatty()
    # The descriptor now writes to /dev/null: the interpreter's last flush cannot fail.
    assert os.readlink(f"/proc/self/fd/{write}") == os.devnull
    os.close(write)


def test_a_lost_output_stops_the_watched_run_and_says_why() -> None:
    """In a process of its own: its standard output is a pipe whose reader is gone, and
    nothing is written to it; the watch notices and the run stops as on Ctrl-C."""
    script = textwrap.dedent(
        """
        import os, sys, threading, time
        from lakecompat.harness.run import console
        from lakecompat.harness.run.interrupt import Stop, watching

        read, write = os.pipe()
        os.dup2(write, 1)
        os.close(read)
        with console.guarded():
            stop = Stop()
            try:
                with watching(threading.Event(), stop):
                    time.sleep(60)
            except KeyboardInterrupt:
                print("stopped:", stop.cause, file=sys.stderr)
            print("printed after the loss")
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=30, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        "stopped: its standard output was closed",
        "printed after the loss",
    ]


def test_a_ctrl_c_that_also_ended_the_reader_is_told_as_a_ctrl_c() -> None:
    """`lakecompat run | tee log`, Ctrl-C: the signal reaches the run and tee at once, and the
    run may notice tee's end before its main thread handles the signal. The stop is the Ctrl-C
    (no cause named), not a closed output. Here the main thread sleeps in a system call while
    the signal arrives and then the reader goes."""
    script = textwrap.dedent(
        """
        import os, signal, sys, threading, time
        from lakecompat.harness.run import console
        from lakecompat.harness.run.interrupt import LOST_OUTPUT, Stop, watching

        read, write = os.pipe()
        os.dup2(write, 1)

        def ctrl_c_then_tee_ends():
            time.sleep(0.3)
            os.kill(os.getpid(), signal.SIGINT)  # taken by a thread other than the main one
            time.sleep(0.3)
            os.close(read)

        with console.guarded():
            stop = Stop()
            try:
                with watching(threading.Event(), stop):
                    threading.Thread(target=ctrl_c_then_tee_ends).start()
                    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, LOST_OUTPUT})
                    time.sleep(2)  # neither signal ends this sleep
                    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, LOST_OUTPUT})
                    time.sleep(5)
            except KeyboardInterrupt:
                print("stopped:", repr(stop.cause), stop.lost, file=sys.stderr)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=30, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == ["stopped: '' its standard output was closed"]
