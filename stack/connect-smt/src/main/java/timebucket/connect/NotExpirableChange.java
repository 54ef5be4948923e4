package timebucket.connect;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.connect.connector.ConnectRecord;
import org.apache.kafka.connect.data.Field;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.transforms.predicates.Predicate;

/**
 * Matches a Debezium change event after which the row is NOT in an expirable state (for example
 * a coupon that is not ACTIVE, an order that is not UNPAID), a delete, or a tombstone. With
 * Kafka's Filter transform it drops them at the source: timebucket schedules only rows that
 * enter an expirable state or move a due time while in it, so these events carry nothing for
 * it. The largest share of them is timebucket's own echo: every row it transitions comes back
 * as an update to its terminal state, which would otherwise be captured, produced, consumed and
 * discarded.
 *
 * Per table (`timebucket connector config` generates this from the entities file):
 *   expirable.tables                  the tables with a rule of their own
 *   expirable.table.<table>.column    their status column
 *   expirable.table.<table>.states    the values in which a row may be due (every transition's
 *                                     from-states); integer codes compare by their decimal text
 *   expirable.unlisted                what a table without a rule gets: `filter` (the legacy rule:
 *                                     column `status`, values `expirable.states`) or `pass`
 * The table is the event's `source.table`.
 *
 * An event of a shape this does not recognise is never matched: it goes through, and the
 * repartitioner dead-letters it with the reason (nothing is dropped silently).
 */
public final class NotExpirableChange<R extends ConnectRecord<R>> implements Predicate<R> {
  public static final String STATES = "expirable.states";
  public static final String TABLES = "expirable.tables";
  public static final String UNLISTED = "expirable.unlisted";
  private static final String TABLE_PREFIX = "expirable.table.";

  private static final ConfigDef CONFIG = new ConfigDef()
      .define(STATES, ConfigDef.Type.LIST, "ACTIVE,UNPAID", ConfigDef.Importance.HIGH,
          "Legacy rule: values of the column `status` in which a row is expirable, for tables without a rule of their own.")
      .define(TABLES, ConfigDef.Type.LIST, "", ConfigDef.Importance.HIGH,
          "Tables with a rule of their own (expirable.table.<table>.column and .states).")
      .define(UNLISTED, ConfigDef.Type.STRING, "filter", ConfigDef.ValidString.in("filter", "pass"), ConfigDef.Importance.MEDIUM,
          "What a table without a rule gets: the legacy rule (filter) or nothing dropped (pass).");

  private record Rule(String column, Set<String> states) {}

  private Rule legacy = new Rule("status", Set.of("ACTIVE", "UNPAID"));
  private boolean passUnlisted = false;
  private Map<String, Rule> rules = Map.of();

  @Override
  public ConfigDef config() {
    return CONFIG;
  }

  @Override
  public void configure(Map<String, ?> configs) {
    Map<String, Object> parsed = CONFIG.parse(configs);
    @SuppressWarnings("unchecked")
    List<String> states = (List<String>) parsed.get(STATES);
    legacy = new Rule("status", Set.copyOf(trimmed(states)));
    passUnlisted = "pass".equals(parsed.get(UNLISTED));
    @SuppressWarnings("unchecked")
    List<String> tables = (List<String>) parsed.get(TABLES);
    Map<String, Rule> byTable = new HashMap<>();
    for (String table : trimmed(tables)) {
      Object column = configs.get(TABLE_PREFIX + table + ".column");
      Object values = configs.get(TABLE_PREFIX + table + ".states");
      if (column == null || column.toString().isBlank() || values == null) {
        throw new ConfigException(TABLE_PREFIX + table + ".column and .states are required for a table listed in " + TABLES);
      }
      List<String> list = values instanceof List<?> l ? l.stream().map(Object::toString).toList() : List.of(values.toString().split(","));
      byTable.put(table, new Rule(column.toString().trim(), Set.copyOf(trimmed(list))));
    }
    rules = Map.copyOf(byTable);
  }

  @Override
  public boolean test(R record) {
    Object value = record.value();
    if (value == null) return true; // tombstone after a delete
    if (!(value instanceof Struct envelope)) return false;
    Field afterField = envelope.schema().field("after");
    if (afterField == null) return false;
    Object after = envelope.get(afterField);
    if (after == null) return true; // a delete
    if (!(after instanceof Struct row)) return false;
    Rule rule = ruleOf(envelope);
    if (rule == null) return false;
    Field statusField = row.schema().field(rule.column());
    if (statusField == null) return false;
    Object status = row.get(statusField);
    if (status instanceof String s) return !rule.states().contains(s);
    if (status instanceof Byte || status instanceof Short || status instanceof Integer || status instanceof Long) {
      return !rule.states().contains(status.toString());
    }
    return false;
  }

  /** The rule of the event's table; null when nothing may be dropped. */
  private Rule ruleOf(Struct envelope) {
    Field sourceField = envelope.schema().field("source");
    Object source = sourceField == null ? null : envelope.get(sourceField);
    if (source instanceof Struct s && s.schema().field("table") != null && s.get("table") instanceof String table) {
      Rule rule = rules.get(table);
      if (rule != null) return rule;
    }
    return passUnlisted ? null : legacy;
  }

  private static List<String> trimmed(List<String> values) {
    return values.stream().map(String::trim).filter(s -> !s.isEmpty()).toList();
  }

  @Override
  public void close() {}
}
