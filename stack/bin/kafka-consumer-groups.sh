#!/usr/bin/env bash
# Kafka's stock consumer-group tool (kafka-consumer-groups.sh of a Kafka distribution) against
# the local stack, run from the jars stack/install.sh resolved (stack/maven/kafka/pom.xml pulls
# org.apache.kafka:kafka-tools at the broker's version). Every argument is passed through:
#
#   stack/bin/kafka-consumer-groups.sh --bootstrap-server "$TB_KAFKA_BROKERS" --list
#   stack/bin/kafka-consumer-groups.sh --bootstrap-server 127.0.0.1:19092 --describe --group timebucket.expirer
#
# `timebucket offsets reset --dry-run` prints the --reset-offsets lines to run with it.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../env.sh"

if ! compgen -G "$TB_STACK_LIB/kafka/kafka-tools-*.jar" >/dev/null; then
  echo "kafka-tools is not installed under $TB_STACK_LIB/kafka: run \`bash stack/install.sh\`" >&2
  exit 1
fi

# A short-lived client: a small heap and a fast start matter more than peak speed. Its own log4j
# file sends only warnings to stderr, so stdout carries nothing but the tool's answer.
exec java -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Djava.awt.headless=true \
  "-Dlog4j.configuration=file:$(dirname "${BASH_SOURCE[0]}")/tools-log4j.properties" \
  -cp "$TB_STACK_LIB/kafka/*" org.apache.kafka.tools.consumer.group.ConsumerGroupCommand "$@"
