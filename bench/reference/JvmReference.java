import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A fixed JVM workload for the benches' machine reference: launched as a source file, so the
 * JVM starts, loads and JIT-compiles the compiler, then allocates, hashes and sorts. That is
 * the kind of work an engine does while it starts and plans a query. On 2026-11-28 a Python
 * loop alone said the machine was quick while the engines' CPU seconds said otherwise.
 */
public class JvmReference {
    public static void main(String[] args) {
        long sum = 0;
        for (int round = 0; round < 20; round++) {
            Map<String, List<Integer>> groups = new HashMap<>();
            for (int i = 0; i < 200_000; i++) {
                groups.computeIfAbsent("k" + (i % 5000), k -> new ArrayList<>()).add(i);
            }
            for (List<Integer> values : groups.values()) {
                values.sort(Collections.reverseOrder());
                sum += values.get(0);
            }
        }
        System.out.println(sum);
    }
}
