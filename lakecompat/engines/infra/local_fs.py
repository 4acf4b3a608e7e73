"""Hadoop's local file system without forked `chmod` and `ls`, for Spark and HiveServer2.

Without Hadoop's native library (`libhadoop.so`, shipped neither in its Maven jars nor in PySpark),
Hadoop's `RawLocalFileSystem` forks `chmod` for every file it creates with a permission and
every folder it makes, and `ls -ld` for every file status whose permission is asked for. A
Hudi write step forked about 40 of them, a HiveServer2 query about 14, 2 ms each.

`lakecompat.NioLocalFileSystem` is Hadoop's `LocalFileSystem` with those two operations done
through Java's own file API, which is what the native library does through the C library:
same permission bits, owner and group, same files. It is set as `fs.file.impl` in Spark's
Hadoop configuration and in HiveServer2's. The tables and the answers are unchanged; only
the cost of the harness's local file system goes down. It is compiled once into the cache.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import zipfile
from collections.abc import Sequence
from pathlib import Path

from lakecompat.engines.infra.artifacts import cache_dir
from lakecompat.engines.infra.jdk import compile_java, find_jdk

#: The class to name as `fs.file.impl`.
LOCAL_FS_CLASS = "lakecompat.NioLocalFileSystem"
#: Hadoop setting that picks the class behind `file:` paths.
LOCAL_FS_KEY = "fs.file.impl"
_COMPILER_JAVA_VERSIONS = (17, 21, 11)
_SOURCE = """\
package lakecompat;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.LocalFileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.fs.permission.FsPermission;

/** Hadoop's local file system; permissions are set and read with java.nio, not forked tools. */
public class NioLocalFileSystem extends LocalFileSystem {
  public NioLocalFileSystem() {
    super(new Raw());
  }

  /** The part below the checksum layer, where Hadoop would fork chmod and ls. */
  public static class Raw extends RawLocalFileSystem {
    /** Permission bits from the lowest (others execute) to the highest (owner read). */
    private static final PosixFilePermission[] BITS = {
      PosixFilePermission.OTHERS_EXECUTE, PosixFilePermission.OTHERS_WRITE,
      PosixFilePermission.OTHERS_READ, PosixFilePermission.GROUP_EXECUTE,
      PosixFilePermission.GROUP_WRITE, PosixFilePermission.GROUP_READ,
      PosixFilePermission.OWNER_EXECUTE, PosixFilePermission.OWNER_WRITE,
      PosixFilePermission.OWNER_READ,
    };

    @Override
    public void setPermission(Path path, FsPermission permission) throws IOException {
      if (permission.getStickyBit()) {
        super.setPermission(path, permission); // java.nio cannot set it; Hadoop's way can
        return;
      }
      short mode = permission.toShort();
      Set<PosixFilePermission> granted = EnumSet.noneOf(PosixFilePermission.class);
      for (int bit = 0; bit < BITS.length; bit++) {
        if ((mode & (1 << bit)) != 0) {
          granted.add(BITS[bit]);
        }
      }
      Files.setPosixFilePermissions(pathToFile(path).toPath(), granted);
    }

    @Override
    public FileStatus getFileStatus(Path path) throws IOException {
      return withPermission(super.getFileStatus(path));
    }

    @Override
    public FileStatus[] listStatus(Path path) throws IOException {
      FileStatus[] listed = super.listStatus(path);
      List<FileStatus> loaded = new ArrayList<>(listed.length);
      for (FileStatus status : listed) {
        try {
          loaded.add(withPermission(status));
        } catch (FileNotFoundException gone) {
          // Deleted since the folder was listed (a writer's temporary file, renamed away):
          // left out, as Hadoop's own listStatus leaves out what it can no longer find.
        }
      }
      return loaded.toArray(new FileStatus[0]);
    }

    /** The same status with permission, owner and group read now (Hadoop reads them lazily). */
    private FileStatus withPermission(FileStatus status) throws IOException {
      if (status.isSymlink()) {
        return status;
      }
      java.nio.file.Path file = pathToFile(status.getPath()).toPath();
      PosixFileAttributes attributes;
      int mode;
      try {
        attributes = Files.readAttributes(file, PosixFileAttributes.class);
        mode = (Integer) Files.getAttribute(file, "unix:mode");
      } catch (NoSuchFileException gone) {
        // Hadoop's callers expect its own exception for a file that is not there.
        throw new FileNotFoundException("File " + status.getPath() + " does not exist");
      }
      return new FileStatus(
          status.getLen(), status.isDirectory(), status.getReplication(), status.getBlockSize(),
          status.getModificationTime(), status.getAccessTime(),
          new FsPermission((short) (mode & 01777)), attributes.owner().getName(),
          attributes.group().getName(), status.getPath());
    }
  }
}
"""


def local_fs_jar(hadoop_classpath: Sequence[Path]) -> Path:
    """The jar of `lakecompat.NioLocalFileSystem`, compiled against `hadoop_classpath` once.

    The jar is named after its source's digest and written beside its final name, then
    renamed, so a jar that exists is whole.
    """
    digest = hashlib.sha256(_SOURCE.encode()).hexdigest()[:12]
    target = cache_dir() / "local-fs" / f"nio-local-fs-{digest}.jar"
    if target.is_file():
        return target
    jdk = find_jdk(_COMPILER_JAVA_VERSIONS, f"compiling {LOCAL_FS_CLASS}")
    target.parent.mkdir(parents=True, exist_ok=True)
    classes = compile_java(
        jdk, LOCAL_FS_CLASS, _SOURCE, hadoop_classpath, target.with_suffix(f".{os.getpid()}"), 11
    )
    partial = target.with_name(f"{target.name}.{os.getpid()}.partial")
    try:
        with zipfile.ZipFile(partial, "w") as jar:
            for path in sorted(classes.rglob("*.class")):
                jar.write(path, path.relative_to(classes).as_posix())
        partial.replace(target)
    finally:
        shutil.rmtree(classes, ignore_errors=True)
        partial.unlink(missing_ok=True)
    return target
