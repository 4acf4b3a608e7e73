package lakecompat;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.reflect.Array;
import java.math.BigDecimal;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.TableResult;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.catalog.Column;
import org.apache.flink.table.types.logical.ArrayType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.MapType;
import org.apache.flink.table.types.logical.MultisetType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;

/**
 * lakecompat's Flink SQL service: one batch TableEnvironment (and its local mini-cluster) that
 * runs the statements it is sent over HTTP on 127.0.0.1, one request at a time.
 *
 * <p>POST /query with {"statements": [...]} runs every statement and answers the last one's
 * rows as JSON: {"columns": [{"name", "type", "root"}], "rows": [[...]]}. A failure answers 422
 * with {"error", "root", "trace"}. Temporary tables a request created are dropped after it.
 * Values: numbers and strings as such; decimals as text; binary as base64; dates as days and
 * timestamps as microseconds since the epoch at the top level, and as text inside nested
 * values (rows as objects, arrays as lists, maps as objects with text keys).
 */
public final class FlinkSqlServer {
  private static final ObjectMapper JSON = new ObjectMapper();
  private final TableEnvironment tables;

  private FlinkSqlServer(TableEnvironment tables) {
    this.tables = tables;
  }

  public static void main(String[] args) throws Exception {
    int port = Integer.parseInt(args[0]);
    Configuration conf = new Configuration();
    conf.setString("parallelism.default", "1");
    conf.setString("table.exec.resource.default-parallelism", "1");
    conf.setString("table.local-time-zone", "UTC");
    // The mini-cluster's sockets (blob server, shuffle) listen on the loopback interface only.
    conf.setString("jobmanager.bind-host", "127.0.0.1");
    conf.setString("jobmanager.rpc.address", "127.0.0.1");
    conf.setString("taskmanager.bind-host", "127.0.0.1");
    conf.setString("taskmanager.host", "127.0.0.1");
    conf.setString("rest.bind-address", "127.0.0.1");
    conf.setString("rest.address", "127.0.0.1");
    // Calcite keeps the planner's metadata in thread-locals: the environment is created, and
    // every statement run, on one thread (the HTTP server's only one).
    ExecutorService worker = Executors.newSingleThreadExecutor();
    TableEnvironment tables = worker.submit(() -> start(conf)).get();
    FlinkSqlServer server = new FlinkSqlServer(tables);
    HttpServer http =
        HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 0);
    http.setExecutor(worker);
    http.createContext("/ping", exchange -> reply(exchange, 200, "{\"ok\": true}"));
    http.createContext("/query", server::query);
    http.start();
    System.out.println("lakecompat Flink SQL service ready on 127.0.0.1:" + port);
    System.out.flush();
  }

  private static TableEnvironment start(Configuration conf) throws Exception {
    // One mini-cluster for the service's life: in local mode Flink would start (and stop) a
    // new one for every query. Statements reach it through its REST endpoint on 127.0.0.1.
    conf.setString("rest.port", "0");
    MiniCluster cluster =
        new MiniCluster(
            new MiniClusterConfiguration.Builder()
                .setConfiguration(conf)
                .setNumTaskManagers(1)
                .setNumSlotsPerTaskManager(2)
                .build());
    cluster.start();
    URI rest = cluster.getRestAddress().get();
    StreamExecutionEnvironment env =
        StreamExecutionEnvironment.createRemoteEnvironment(rest.getHost(), rest.getPort(), conf);
    env.setRuntimeMode(RuntimeExecutionMode.BATCH);
    TableEnvironment tables =
        StreamTableEnvironment.create(
            env, EnvironmentSettings.newInstance().inBatchMode().withConfiguration(conf).build());
    // The first query loads the planner and the connector classes; do it before reporting ready.
    try (CloseableIterator<Row> rows = tables.executeSql("SELECT 1").collect()) {
      rows.forEachRemaining(row -> {});
    }
    return tables;
  }

  private void query(HttpExchange exchange) throws IOException {
    Map<String, Object> answer;
    int status = 200;
    try {
      Map<?, ?> request = JSON.readValue(exchange.getRequestBody(), Map.class);
      List<?> statements = (List<?>) request.get("statements");
      answer = run(statements);
    } catch (Throwable failure) {
      status = 422;
      answer = failure(failure);
    } finally {
      for (String name : tables.listTemporaryTables()) {
        tables.dropTemporaryTable(name);
      }
    }
    reply(exchange, status, JSON.writeValueAsString(answer));
  }

  private Map<String, Object> run(List<?> statements) throws Exception {
    TableResult result = null;
    for (Object statement : statements) {
      if (result != null) {
        result.await();
      }
      result = tables.executeSql(String.valueOf(statement));
    }
    if (result == null) {
      throw new IllegalArgumentException("no statements in the request");
    }
    List<Column> columns = result.getResolvedSchema().getColumns();
    List<Map<String, Object>> described = new ArrayList<>();
    List<LogicalType> types = new ArrayList<>();
    for (Column column : columns) {
      LogicalType type = column.getDataType().getLogicalType();
      types.add(type);
      Map<String, Object> entry = new LinkedHashMap<>();
      entry.put("name", column.getName());
      entry.put("type", type.asSummaryString());
      entry.put("root", type.getTypeRoot().name());
      described.add(entry);
    }
    List<List<Object>> rows = new ArrayList<>();
    try (CloseableIterator<Row> iterator = result.collect()) {
      while (iterator.hasNext()) {
        Row row = iterator.next();
        List<Object> values = new ArrayList<>();
        for (int i = 0; i < types.size(); i++) {
          values.add(value(row.getField(i), types.get(i), true));
        }
        rows.add(values);
      }
    }
    Map<String, Object> answer = new LinkedHashMap<>();
    answer.put("columns", described);
    answer.put("rows", rows);
    return answer;
  }

  /** A value as JSON; `top`: a column of the answer (not inside a nested value). */
  private static Object value(Object value, LogicalType type, boolean top) {
    if (value == null) {
      return null;
    }
    if (value instanceof Row && type instanceof RowType) {
      RowType rowType = (RowType) type;
      Row row = (Row) value;
      Map<String, Object> fields = new LinkedHashMap<>();
      for (int i = 0; i < rowType.getFieldCount(); i++) {
        fields.put(rowType.getFieldNames().get(i), value(row.getField(i), rowType.getTypeAt(i), false));
      }
      return fields;
    }
    if (value.getClass().isArray() && !(value instanceof byte[])) {
      LogicalType element =
          type instanceof ArrayType ? ((ArrayType) type).getElementType() : type;
      List<Object> items = new ArrayList<>();
      for (int i = 0; i < Array.getLength(value); i++) {
        items.add(value(Array.get(value, i), element, false));
      }
      return items;
    }
    if (value instanceof Map) {
      LogicalType keyType = type instanceof MapType ? ((MapType) type).getKeyType() : type;
      LogicalType valueType = type instanceof MapType ? ((MapType) type).getValueType() : type;
      if (type instanceof MultisetType) {
        keyType = ((MultisetType) type).getElementType();
      }
      Map<String, Object> entries = new LinkedHashMap<>();
      for (Map.Entry<?, ?> entry : ((Map<?, ?>) value).entrySet()) {
        entries.put(
            String.valueOf(value(entry.getKey(), keyType, false)),
            value(entry.getValue(), valueType, false));
      }
      return entries;
    }
    if (value instanceof BigDecimal) {
      return ((BigDecimal) value).toPlainString();
    }
    if (value instanceof byte[]) {
      return Base64.getEncoder().encodeToString((byte[]) value);
    }
    if (value instanceof Double || value instanceof Float) {
      double number = ((Number) value).doubleValue();
      if (Double.isNaN(number) || Double.isInfinite(number)) {
        return String.valueOf(number);
      }
      return value;
    }
    if (value instanceof LocalDateTime) {
      LocalDateTime time = (LocalDateTime) value;
      return top ? micros(time.toInstant(ZoneOffset.UTC)) : timestampText(time);
    }
    if (value instanceof Instant) {
      Instant time = (Instant) value;
      return top ? micros(time) : timestampText(LocalDateTime.ofInstant(time, ZoneOffset.UTC));
    }
    if (value instanceof LocalDate) {
      LocalDate date = (LocalDate) value;
      return top ? date.toEpochDay() : date.toString();
    }
    if (value instanceof LocalTime) {
      return value.toString();
    }
    if (value instanceof Number || value instanceof Boolean || value instanceof String) {
      return value;
    }
    return String.valueOf(value);
  }

  private static long micros(Instant time) {
    return ChronoUnit.MICROS.between(Instant.EPOCH, time);
  }

  /** `2024-01-02 03:04:05.12`: the text of a timestamp inside nested values, zeros trimmed. */
  private static String timestampText(LocalDateTime time) {
    String text = String.format(
        "%04d-%02d-%02d %02d:%02d:%02d",
        time.getYear(), time.getMonthValue(), time.getDayOfMonth(),
        time.getHour(), time.getMinute(), time.getSecond());
    String fraction = String.format("%06d", time.getNano() / 1000).replaceAll("0+$", "");
    return fraction.isEmpty() ? text : text + "." + fraction;
  }

  private static Map<String, Object> failure(Throwable failure) {
    Throwable root = failure;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    List<String> trace = new ArrayList<>();
    for (StackTraceElement frame : root.getStackTrace()) {
      trace.add(frame.toString());
      if (trace.size() == 25) {
        break;
      }
    }
    Map<String, Object> answer = new LinkedHashMap<>();
    answer.put("error", describe(failure));
    answer.put("root", describe(root));
    answer.put("trace", trace);
    return answer;
  }

  private static String describe(Throwable failure) {
    String message = failure.getMessage();
    String first = message == null ? "null" : message.strip().split("\n", 2)[0];
    return failure.getClass().getName() + ": " + first;
  }

  private static void reply(HttpExchange exchange, int status, String body) throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().set("Content-Type", "application/json");
    exchange.sendResponseHeaders(status, bytes.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(bytes);
    }
  }
}
