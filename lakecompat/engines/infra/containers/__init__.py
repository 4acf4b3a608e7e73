"""Engines in containers (`lakecompat run --containers`).

- `runtime`: the container runtime a run talks to, through the Docker API: a Docker daemon
  that answers, else Podman's own service started by the run with the project's configuration
  (runc, cgroupfs, host network, ulimits the machine allows); what an earlier run left behind
  is removed first.
- `images`: the images the project builds itself, from Debian's packages and the JDKs the
  engines run with, cached by the content of their inputs.
- `service`: a service of the supervisor whose process runs in a container instead.
"""
