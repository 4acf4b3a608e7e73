package lakecompat.hive3;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;

/**
 * The JVM's system class loader for Hive 3 on Java 9 and later.
 *
 * <p>Hive 3 was written for Java 8, whose application class loader is a URLClassLoader, and
 * casts it to one (SessionState, Utilities.addToClassPath). Given as
 * {@code -Djava.system.class.loader}, with only its own jar on {@code -cp}, this loader loads
 * every class of the jars listed (one path per line) in the file that the system property
 * {@code lakecompat.classpath.file} names, so the cast holds.
 */
public final class ClasspathLoader extends URLClassLoader {
  static {
    ClassLoader.registerAsParallelCapable();
  }

  /** Called by the JVM with the built-in application class loader as {@code parent}. */
  public ClasspathLoader(ClassLoader parent) {
    super(listed(), parent);
  }

  private static URL[] listed() {
    String file = System.getProperty("lakecompat.classpath.file");
    if (file == null) {
      throw new IllegalStateException("-Dlakecompat.classpath.file is not set");
    }
    List<URL> urls = new ArrayList<>();
    try {
      for (String line : Files.readAllLines(Paths.get(file))) {
        if (!line.isBlank()) {
          urls.add(Path.of(line.strip()).toUri().toURL());
        }
      }
    } catch (MalformedURLException e) {
      throw new IllegalStateException(e);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the classpath file " + file, e);
    }
    return urls.toArray(new URL[0]);
  }
}
