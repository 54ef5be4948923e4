package timebucket.connect;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaBuilder;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.source.SourceRecord;
import org.junit.jupiter.api.Test;

/** The predicate on Debezium-shaped envelopes: per-table rules, typed values, the legacy rule. */
class NotExpirableChangeTest {
  private static final Schema SOURCE = SchemaBuilder.struct().field("table", Schema.STRING_SCHEMA).build();

  private static SourceRecord change(String table, String column, Schema statusSchema, Object status) {
    Schema row = SchemaBuilder.struct().optional().field(column, statusSchema).build();
    Schema envelope = SchemaBuilder.struct().field("after", row).field("source", SOURCE).build();
    Struct value = new Struct(envelope).put("after", new Struct(row).put(column, status)).put("source", new Struct(SOURCE).put("table", table));
    return new SourceRecord(Map.of(), Map.of(), "t", envelope, value);
  }

  private static NotExpirableChange<SourceRecord> predicate(Map<String, String> config) {
    NotExpirableChange<SourceRecord> p = new NotExpirableChange<>();
    p.configure(config);
    return p;
  }

  @Test
  void theLegacyRuleReadsStatusAgainstTheListedStates() {
    NotExpirableChange<SourceRecord> p = predicate(Map.of());
    assertFalse(p.test(change("coupons", "status", Schema.STRING_SCHEMA, "ACTIVE")));
    assertTrue(p.test(change("coupons", "status", Schema.STRING_SCHEMA, "EXPIRED")));
  }

  @Test
  void aTableRuleNamesItsColumnAndStatesIncludingNonAsciiAndIntegerCodes() {
    Map<String, String> config = new HashMap<>();
    config.put("expirable.tables", "user_coupon,task");
    config.put("expirable.unlisted", "pass");
    config.put("expirable.table.user_coupon.column", "coupon_status");
    config.put("expirable.table.user_coupon.states", "待使用,已锁定");
    config.put("expirable.table.task.column", "state");
    config.put("expirable.table.task.states", "1,2");
    NotExpirableChange<SourceRecord> p = predicate(config);
    assertFalse(p.test(change("user_coupon", "coupon_status", Schema.STRING_SCHEMA, "已锁定")));
    assertTrue(p.test(change("user_coupon", "coupon_status", Schema.STRING_SCHEMA, "已过期")));
    assertFalse(p.test(change("task", "state", Schema.INT8_SCHEMA, (byte) 2)));
    assertTrue(p.test(change("task", "state", Schema.INT32_SCHEMA, 9)));
    // Unlisted tables pass: nothing is dropped that no rule covers.
    assertFalse(p.test(change("coupons", "status", Schema.STRING_SCHEMA, "EXPIRED")));
    // A row without the rule's column is never dropped: the repartitioner dead-letters it.
    assertFalse(p.test(change("task", "status", Schema.INT32_SCHEMA, 9)));
  }

  @Test
  void aListedTableWithoutItsRuleIsAConfigurationError() {
    assertThrows(ConfigException.class, () -> predicate(Map.of("expirable.tables", "t_order")));
  }
}
