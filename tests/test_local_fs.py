"""lakecompat's local file system for Hadoop: the same permissions as Hadoop's, without forks."""

from __future__ import annotations

import grp
import os
import pwd
import stat
import subprocess
from pathlib import Path

import pyspark
import pytest

from lakecompat.engines.infra.jdk import find_jdk
from lakecompat.engines.infra.local_fs import LOCAL_FS_CLASS, local_fs_jar

JARS = Path(pyspark.__file__).parent / "jars"
#: Creates a folder and a file with permissions through Hadoop's FileSystem API, changes the
#: file's permission, and prints what Hadoop reports back.
PROBE = """\
import java.net.URI;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.*;
import org.apache.hadoop.fs.permission.FsPermission;

public class Probe {
  public static void main(String[] args) throws Exception {
    Configuration conf = new Configuration();
    if (args.length > 1) conf.set("fs.file.impl", args[1]);
    FileSystem fs = FileSystem.get(new URI("file:///"), conf);
    System.out.println("class " + fs.getClass().getName());
    Path root = new Path(args[0]);
    Path folder = new Path(root, "folder");
    fs.mkdirs(folder, new FsPermission((short) 0751));
    Path file = new Path(folder, "data");
    try (FSDataOutputStream out =
        fs.create(file, new FsPermission((short) 0640), true, 4096, (short) 1, 1 << 20, null)) {
      out.write(7);
    }
    fs.setPermission(file, new FsPermission((short) 0604));
    for (FileStatus s : fs.listStatus(folder)) {
      System.out.println("list " + s.getPath().getName() + " " + s.getPermission() + " "
          + s.getOwner() + " " + s.getGroup() + " " + s.getLen());
    }
    FileStatus s = fs.getFileStatus(folder);
    System.out.println("stat " + s.getPermission() + " " + s.getOwner() + " " + s.getGroup());
  }
}
"""


def probe(
    tmp_path: Path, name: str, fs_class: str | None, path: str
) -> subprocess.CompletedProcess[str]:
    """Run the probe in a folder `name`, with `fs_class` as Hadoop's `file:` file system."""
    source = tmp_path / "Probe.java"
    source.write_text(PROBE)
    jars = [local_fs_jar(sorted(JARS.glob("hadoop-client-api-*.jar")))]
    for pattern in (
        "hadoop-client-api-*",
        "hadoop-client-runtime-*",
        "commons-logging-*",
        "slf4j-api-*",
    ):
        jars += sorted(JARS.glob(f"{pattern}.jar"))
    argv = [str(find_jdk((17, 11), "the probe").java), "-cp", os.pathsep.join(map(str, jars))]
    argv += [str(source), str(tmp_path / name), *([fs_class] if fs_class else [])]
    return subprocess.run(argv, capture_output=True, text=True, env={**os.environ, "PATH": path})


@pytest.mark.integration
def test_permissions_equal_hadoops_own_without_forking(tmp_path: Path) -> None:
    # Hadoop's own local file system, as Spark and HiveServer2 would use it.
    stock = probe(tmp_path, "stock", None, os.environ["PATH"])
    assert stock.returncode == 0, stock.stderr
    assert "class org.apache.hadoop.fs.LocalFileSystem" in stock.stdout
    # Without any program on PATH, Hadoop's own cannot even create the file: it forks chmod.
    no_tools = tmp_path / "empty-bin"
    no_tools.mkdir()
    failed = probe(tmp_path, "stock-no-tools", None, str(no_tools))
    assert failed.returncode != 0
    assert 'Cannot run program "chmod"' in failed.stderr
    # Ours needs no program and reports what Hadoop's own reports.
    ours = probe(tmp_path, "ours", LOCAL_FS_CLASS, str(no_tools))
    assert ours.returncode == 0, ours.stderr
    assert ours.stdout.splitlines()[0] == f"class {LOCAL_FS_CLASS}"
    assert ours.stdout.splitlines()[1:] == stock.stdout.splitlines()[1:]
    owner, group = pwd.getpwuid(os.getuid()).pw_name, grp.getgrgid(os.getgid()).gr_name
    assert ours.stdout.splitlines()[1:] == [
        f"list data rw----r-- {owner} {group} 1",
        f"stat rwxr-x--x {owner} {group}",
    ]
    # ...and what the operating system says.
    folder = tmp_path / "ours" / "folder"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o751
    assert stat.S_IMODE((folder / "data").stat().st_mode) == 0o604
