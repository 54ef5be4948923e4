package timebucket.connect;

import java.util.Arrays;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.connector.ConnectRecord;
import org.apache.kafka.connect.data.Field;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.transforms.predicates.Predicate;

/**
 * Matches a Debezium change event after which the row is NOT in an expirable state (a coupon
 * that is not ACTIVE, an order that is not UNPAID), a delete, or a tombstone. With Kafka's
 * Filter transform it drops them at the source: timebucket schedules only rows that enter an
 * expirable state or move their expire time while in it, so these events carry nothing for it.
 * The largest share of them is timebucket's own echo: every row it expires or cancels comes back
 * as an update to EXPIRED / CANCELLED, which would otherwise be captured, produced, consumed and
 * discarded.
 *
 * An event of a shape this does not recognise is never matched: it goes through, and the
 * repartitioner dead-letters it with the reason (nothing is dropped silently).
 */
public final class NotExpirableChange<R extends ConnectRecord<R>> implements Predicate<R> {
  public static final String STATES = "expirable.states";

  private static final ConfigDef CONFIG = new ConfigDef()
      .define(STATES, ConfigDef.Type.LIST, "ACTIVE,UNPAID", ConfigDef.Importance.HIGH,
          "Values of the status column in which a row is expirable; events leaving a row in any other state are matched.");

  private Set<String> expirable = Set.of();

  @Override
  public ConfigDef config() {
    return CONFIG;
  }

  @Override
  public void configure(Map<String, ?> configs) {
    Object states = configs.get(STATES);
    String list = states == null ? "ACTIVE,UNPAID" : states.toString();
    expirable = Arrays.stream(list.split(",")).map(String::trim).filter(s -> !s.isEmpty()).collect(Collectors.toUnmodifiableSet());
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
    Field statusField = row.schema().field("status");
    if (statusField == null) return false;
    Object status = row.get(statusField);
    return status instanceof String s && !expirable.contains(s);
  }

  @Override
  public void close() {}
}
