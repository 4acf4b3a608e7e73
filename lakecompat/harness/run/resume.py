"""Completing an interrupted run (`lakecompat run --resume`, and each unfinished point of
`lakecompat qualify --resume`): its missing cells, with the options and the releases it
started with, into the same folder."""

from __future__ import annotations

from lakecompat.harness.run.options import RunOptions, RunResult
from lakecompat.harness.run.progress import Progress
from lakecompat.harness.run.releases import differences, environment_releases
from lakecompat.harness.run.runner import Runner


def resume(options: RunOptions, progress: Progress) -> RunResult:
    """Complete the run `options` describe (`resume_options` of its folder, `resume_dir`)
    with the releases it started with in force; a release this shell would choose otherwise
    is named on stdout."""
    if options.resume_dir is None:
        raise ValueError("resume() completes a run: its options need a resume_dir")
    # The cells still to read come from the engines the run started with (`resume_options`
    # put its recorded releases in `options.releases`), whatever this shell names.
    changed = differences(options.releases, environment_releases())
    if changed:
        print("resuming with the releases the run started with: " + ", ".join(changed))
    return Runner(options, progress).run()
