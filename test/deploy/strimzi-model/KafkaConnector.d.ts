import { IObjectMeta } from "@kubernetes-models/apimachinery/apis/meta/v1/ObjectMeta";
import { Model, ModelData } from "@kubernetes-models/base";
export interface IKafkaConnector {
    /**
     * APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources
     */
    "apiVersion": "kafka.strimzi.io/v1beta2";
    /**
     * Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds
     */
    "kind": "KafkaConnector";
    "metadata"?: IObjectMeta;
    /**
     * The specification of the Kafka Connector.
     */
    "spec"?: {
        /**
         * The Class for the Kafka Connector.
         */
        "class"?: string;
        /**
         * The maximum number of tasks for the Kafka Connector.
         */
        "tasksMax"?: number;
        /**
         * Automatic restart of connector and tasks configuration.
         */
        "autoRestart"?: {
            /**
             * Whether automatic restart for failed connectors and tasks should be enabled or disabled.
             */
            "enabled"?: boolean;
            /**
             * The maximum number of connector restarts that the operator will try. If the connector remains in a failed state after reaching this limit, it must be restarted manually by the user. Defaults to an unlimited number of restarts.
             */
            "maxRestarts"?: number;
        };
        /**
         * Desired version or version range to respect when starting the Kafka Connector. This is only supported when using Kafka Connect version 4.1.0 and higher.
         */
        "version"?: string;
        /**
         * The Kafka Connector configuration. The following properties cannot be set: name, connector.class, tasks.max.
         */
        "config"?: {};
        /**
         * Whether the connector should be paused. Defaults to false.
         */
        "pause"?: boolean;
        /**
         * The state the connector should be in. Defaults to running.
         */
        "state"?: "paused" | "stopped" | "running";
        /**
         * Configuration for listing offsets.
         */
        "listOffsets"?: {
            /**
             * Reference to the ConfigMap where the list of offsets will be written to.
             */
            "toConfigMap": {
                "name"?: string;
            };
        };
        /**
         * Configuration for altering offsets.
         */
        "alterOffsets"?: {
            /**
             * Reference to the ConfigMap where the new offsets are stored.
             */
            "fromConfigMap": {
                "name"?: string;
            };
        };
    };
    /**
     * The status of the Kafka Connector.
     */
    "status"?: {
        /**
         * List of status conditions.
         */
        "conditions"?: Array<{
            /**
             * The unique identifier of a condition, used to distinguish between other conditions in the resource.
             */
            "type"?: string;
            /**
             * The status of the condition, either True, False or Unknown.
             */
            "status"?: string;
            /**
             * Last time the condition of a type changed from one status to another. The required format is 'yyyy-MM-ddTHH:mm:ssZ', in the UTC time zone.
             */
            "lastTransitionTime"?: string;
            /**
             * The reason for the condition's last transition (a single word in CamelCase).
             */
            "reason"?: string;
            /**
             * Human-readable message indicating details about the condition's last transition.
             */
            "message"?: string;
        }>;
        /**
         * The generation of the CRD that was last reconciled by the operator.
         */
        "observedGeneration"?: number;
        /**
         * The auto restart status.
         */
        "autoRestart"?: {
            /**
             * The number of times the connector or task is restarted.
             */
            "count"?: number;
            /**
             * The name of the connector being restarted.
             */
            "connectorName"?: string;
            /**
             * The last time the automatic restart was attempted. The required format is 'yyyy-MM-ddTHH:mm:ssZ' in the UTC time zone.
             */
            "lastRestartTimestamp"?: string;
        };
        /**
         * The connector status, as reported by the Kafka Connect REST API.
         */
        "connectorStatus"?: {};
        /**
         * The maximum number of tasks for the Kafka Connector.
         */
        "tasksMax"?: number;
        /**
         * The list of topics used by the Kafka Connector.
         */
        "topics"?: Array<string>;
    };
}
export declare class KafkaConnector extends Model<IKafkaConnector> implements IKafkaConnector {
    "apiVersion": IKafkaConnector["apiVersion"];
    "kind": IKafkaConnector["kind"];
    "metadata"?: IKafkaConnector["metadata"];
    "spec"?: IKafkaConnector["spec"];
    "status"?: IKafkaConnector["status"];
    static apiVersion: IKafkaConnector["apiVersion"];
    static kind: IKafkaConnector["kind"];
    static is: import("@kubernetes-models/base").TypeMetaGuard<IKafkaConnector>;
    constructor(data?: ModelData<IKafkaConnector>);
}
