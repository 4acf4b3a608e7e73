package org.apache.hadoop.hive.ql.exec;

import java.util.ArrayList;
import java.util.List;
import org.apache.hive.com.esotericsoftware.kryo.Kryo;
import org.apache.hive.com.esotericsoftware.kryo.Serializer;
import org.apache.hive.com.esotericsoftware.kryo.io.Input;
import org.apache.hive.com.esotericsoftware.kryo.io.Output;

/**
 * lakecompat's stand-in for Hive 3.1.3's Kryo serializer of {@code ArrayList.subList(...)}
 * (the nested class {@code SerializationUtilities.ArrayListSubListSerializer}, by its binary
 * name), ahead of hive-exec on HiveServer2's classpath.
 *
 * <p>Hive's own reads the fields of Java 8's {@code ArrayList$SubList} ({@code parentOffset})
 * by reflection when it is made; Java 9 renamed them, so every Kryo Hive makes fails and no
 * MapReduce job can be planned. This one writes the sub-list's elements and reads them back
 * as a sub-list of a new list of those elements: the same elements, in the same order.
 */
class SerializationUtilities$ArrayListSubListSerializer extends Serializer<List<?>> {
  public SerializationUtilities$ArrayListSubListSerializer() {}

  @Override
  public void write(Kryo kryo, Output output, List<?> list) {
    output.writeVarInt(list.size(), true);
    for (Object element : list) {
      kryo.writeClassAndObject(output, element);
    }
  }

  @Override
  public List<?> read(Kryo kryo, Input input, Class<List<?>> type) {
    int size = input.readVarInt(true);
    List<Object> elements = new ArrayList<>(size);
    for (int i = 0; i < size; i++) {
      elements.add(kryo.readClassAndObject(input));
    }
    return elements.subList(0, size);
  }

  @Override
  public List<?> copy(Kryo kryo, List<?> original) {
    List<Object> elements = new ArrayList<>(original.size());
    for (Object element : original) {
      elements.add(kryo.copy(element));
    }
    return elements.subList(0, elements.size());
  }
}
