package cloudapi

import "encoding/json"

// The types below mirror the cloud API spec field for field, with the spec's
// JSON names (the controller converts them into its CRD types by a JSON round
// trip, so the names must match exactly).
//
// Every scalar and object is a pointer with omitempty, so that a field the API
// leaves out or sends as null stays absent when re-marshalled, while false, 0
// and "" stay present. Slices use omitzero: null and absent stay nil and are
// left out, while an empty JSON array stays an empty, non-nil slice and is
// re-marshalled as []. Decimals are json.Number so their exact text survives.

// PipeList is the result of listing the pipes of a service.
type PipeList struct {
	// RequestID is the management envelope's requestId, to quote to support.
	RequestID string
	// Items are the pipes, in the order the API sent them.
	Items []Pipe
}

// ReversePrivateEndpointList is the result of listing the reverse private
// endpoints of a service.
type ReversePrivateEndpointList struct {
	// RequestID is the management envelope's requestId, to quote to support.
	RequestID string
	// Items are the endpoints, in the order the API sent them.
	Items []ReversePrivateEndpoint
}

// AlertResult is the result of fetching one alert.
type AlertResult struct {
	// Alert is the value of the response's data member.
	Alert Alert
	// RequestID is the X-Request-Id response header, when the alert API sends
	// one (its body carries no request ID).
	RequestID string
}

// Pipe is a data-ingestion pipe of a service.
type Pipe struct {
	ID            *string        `json:"id,omitempty"`
	ServiceID     *string        `json:"serviceId,omitempty"`
	Name          *string        `json:"name,omitempty"`
	State         *string        `json:"state,omitempty"`
	Scaling       *Scaling       `json:"scaling,omitempty"`
	Source        *Source        `json:"source,omitempty"`
	Destination   *Destination   `json:"destination,omitempty"`
	FieldMappings []FieldMapping `json:"fieldMappings,omitzero"`
	Settings      *PipeSettings  `json:"settings,omitempty"`
	CreatedAt     *string        `json:"createdAt,omitempty"`
	UpdatedAt     *string        `json:"updatedAt,omitempty"`
}

// Scaling is a pipe's scaling.
type Scaling struct {
	Replicas             *int64 `json:"replicas,omitempty"`
	Concurrency          *int64 `json:"concurrency,omitempty"`
	ReplicaCPUMillicores *int64 `json:"replicaCpuMillicores,omitempty"`
	// ReplicaMemoryGB is a decimal, kept as the exact text the API sent.
	ReplicaMemoryGB *json.Number `json:"replicaMemoryGb,omitempty"`
}

// Source holds one member per source kind; the spec does not say which or
// how many are present, so any combination is accepted.
type Source struct {
	Kafka         *KafkaSource         `json:"kafka,omitempty"`
	ObjectStorage *ObjectStorageSource `json:"objectStorage,omitempty"`
	Kinesis       *KinesisSource       `json:"kinesis,omitempty"`
	Postgres      *PostgresSource      `json:"postgres,omitempty"`
}

// KafkaSource is a streaming-broker source.
type KafkaSource struct {
	Brokers                   *string         `json:"brokers,omitempty"`
	Topics                    *string         `json:"topics,omitempty"`
	ConsumerGroup             *string         `json:"consumerGroup,omitempty"`
	IAMRole                   *string         `json:"iamRole,omitempty"`
	Offset                    *KafkaOffset    `json:"offset,omitempty"`
	SchemaRegistry            *SchemaRegistry `json:"schemaRegistry,omitempty"`
	CACertificate             *string         `json:"caCertificate,omitempty"`
	ReversePrivateEndpointIDs []string        `json:"reversePrivateEndpointIds,omitzero"`
}

// KafkaOffset is where a Kafka source starts reading.
type KafkaOffset struct {
	// Timestamp is shaped like a date-time without seconds or zone; kept as
	// sent.
	Timestamp *string `json:"timestamp,omitempty"`
}

// SchemaRegistry is a Kafka source's schema registry.
type SchemaRegistry struct {
	URL           *string `json:"url,omitempty"`
	CACertificate *string `json:"caCertificate,omitempty"`
}

// ObjectStorageSource is an object-storage source.
type ObjectStorageSource struct {
	URL          *string `json:"url,omitempty"`
	Delimiter    *string `json:"delimiter,omitempty"`
	Compression  *string `json:"compression,omitempty"`
	IsContinuous *bool   `json:"isContinuous,omitempty"`
	QueueURL     *string `json:"queueUrl,omitempty"`
	IAMRole      *string `json:"iamRole,omitempty"`
	// ConnectionString is a credential. It is decoded so the caller can tell
	// whether one is set, and must never be copied to status, events or logs.
	ConnectionString   *string `json:"connectionString,omitempty"`
	Path               *string `json:"path,omitempty"`
	AzureContainerName *string `json:"azureContainerName,omitempty"`
}

// KinesisSource is a stream-service source.
type KinesisSource struct {
	StreamName        *string `json:"streamName,omitempty"`
	Region            *string `json:"region,omitempty"`
	UseEnhancedFanOut *bool   `json:"useEnhancedFanOut,omitempty"`
	// Timestamp's unit is not given by the spec.
	Timestamp *int64  `json:"timestamp,omitempty"`
	IAMRole   *string `json:"iamRole,omitempty"`
}

// PostgresSource is a relational-database source.
type PostgresSource struct {
	Host          *string                `json:"host,omitempty"`
	Port          *int64                 `json:"port,omitempty"`
	Database      *string                `json:"database,omitempty"`
	Settings      *PostgresSettings      `json:"settings,omitempty"`
	TableMappings []PostgresTableMapping `json:"tableMappings,omitzero"`
}

// PostgresSettings are a Postgres source's replication settings.
type PostgresSettings struct {
	SyncIntervalSeconds            *int64  `json:"syncIntervalSeconds,omitempty"`
	PullBatchSize                  *int64  `json:"pullBatchSize,omitempty"`
	PublicationName                *string `json:"publicationName,omitempty"`
	ReplicationSlotName            *string `json:"replicationSlotName,omitempty"`
	AllowNullableColumns           *bool   `json:"allowNullableColumns,omitempty"`
	InitialLoadParallelism         *int64  `json:"initialLoadParallelism,omitempty"`
	SnapshotNumRowsPerPartition    *int64  `json:"snapshotNumRowsPerPartition,omitempty"`
	SnapshotNumberOfParallelTables *int64  `json:"snapshotNumberOfParallelTables,omitempty"`
	EnableFailoverSlots            *bool   `json:"enableFailoverSlots,omitempty"`
}

// PostgresTableMapping maps one source table to a destination table.
type PostgresTableMapping struct {
	SourceSchemaName    *string  `json:"sourceSchemaName,omitempty"`
	SourceTable         *string  `json:"sourceTable,omitempty"`
	TargetTable         *string  `json:"targetTable,omitempty"`
	ExcludedColumns     []string `json:"excludedColumns,omitzero"`
	UseCustomSortingKey *bool    `json:"useCustomSortingKey,omitempty"`
	SortingKeys         []string `json:"sortingKeys,omitzero"`
}

// Destination is where a pipe writes.
type Destination struct {
	Database        *string          `json:"database,omitempty"`
	Table           *string          `json:"table,omitempty"`
	ManagedTable    *bool            `json:"managedTable,omitempty"`
	TableDefinition *TableDefinition `json:"tableDefinition,omitempty"`
	Columns         []Column         `json:"columns,omitzero"`
}

// TableDefinition describes a managed destination table.
type TableDefinition struct {
	Engine      *TableEngine `json:"engine,omitempty"`
	SortingKey  []string     `json:"sortingKey,omitzero"`
	PartitionBy *string      `json:"partitionBy,omitempty"`
	PrimaryKey  *string      `json:"primaryKey,omitempty"`
}

// TableEngine is a destination table's engine.
type TableEngine struct {
	VersionColumnID *string  `json:"versionColumnId,omitempty"`
	ColumnIDs       []string `json:"columnIds,omitzero"`
}

// Column is a destination table column.
type Column struct {
	Name *string `json:"name,omitempty"`
	Type *string `json:"type,omitempty"`
}

// FieldMapping maps a source field to a destination field.
type FieldMapping struct {
	SourceField      *string `json:"sourceField,omitempty"`
	DestinationField *string `json:"destinationField,omitempty"`
}

// PipeSettings are a pipe's tuning settings. Their JSON names are snake_case,
// as in the spec.
type PipeSettings struct {
	StreamingMaxInsertWaitMs                 *int64 `json:"streaming_max_insert_wait_ms,omitempty"`
	ObjectStorageConcurrency                 *int64 `json:"object_storage_concurrency,omitempty"`
	ObjectStoragePollingIntervalMs           *int64 `json:"object_storage_polling_interval_ms,omitempty"`
	ObjectStorageMaxInsertBytes              *int64 `json:"object_storage_max_insert_bytes,omitempty"`
	ObjectStorageMaxFileCount                *int64 `json:"object_storage_max_file_count,omitempty"`
	WarehouseMaxThreads                      *int64 `json:"warehouse_max_threads,omitempty"`
	WarehouseMaxInsertThreads                *int64 `json:"warehouse_max_insert_threads,omitempty"`
	WarehouseMinInsertBlockSizeBytes         *int64 `json:"warehouse_min_insert_block_size_bytes,omitempty"`
	WarehouseMaxDownloadThreads              *int64 `json:"warehouse_max_download_threads,omitempty"`
	WarehouseParallelDistributedInsertSelect *int64 `json:"warehouse_parallel_distributed_insert_select,omitempty"`
	ObjectStorageUseClusterFunction          *bool  `json:"object_storage_use_cluster_function,omitempty"`
	WarehouseParallelViewProcessing          *bool  `json:"warehouse_parallel_view_processing,omitempty"`
}

// ReversePrivateEndpoint is a private-network endpoint that pipes use to
// reach their sources.
type ReversePrivateEndpoint struct {
	ID                         *string  `json:"id,omitempty"`
	ServiceID                  *string  `json:"serviceId,omitempty"`
	Description                *string  `json:"description,omitempty"`
	Type                       *string  `json:"type,omitempty"`
	VPCEndpointServiceName     *string  `json:"vpcEndpointServiceName,omitempty"`
	VPCResourceConfigurationID *string  `json:"vpcResourceConfigurationId,omitempty"`
	VPCResourceShareARN        *string  `json:"vpcResourceShareArn,omitempty"`
	MSKClusterARN              *string  `json:"mskClusterArn,omitempty"`
	MSKAuthentication          *string  `json:"mskAuthentication,omitempty"`
	EndpointID                 *string  `json:"endpointId,omitempty"`
	DNSNames                   []string `json:"dnsNames,omitzero"`
	PrivateDNSNames            []string `json:"privateDnsNames,omitzero"`
	Status                     *string  `json:"status,omitempty"`
}

// Alert is one alert of the alert API.
type Alert struct {
	ID      *string `json:"id,omitempty"`
	Name    *string `json:"name,omitempty"`
	Message *string `json:"message,omitempty"`
	// Threshold is a decimal, kept as the exact text the API sent.
	Threshold *json.Number `json:"threshold,omitempty"`
	// Interval is shaped like "5m"; kept as sent.
	Interval      *string       `json:"interval,omitempty"`
	ThresholdType *string       `json:"thresholdType,omitempty"`
	Source        *string       `json:"source,omitempty"`
	State         *string       `json:"state,omitempty"`
	Channel       *AlertChannel `json:"channel,omitempty"`
	Team          *string       `json:"team,omitempty"`
	TileID        *string       `json:"tileId,omitempty"`
	Dashboard     *string       `json:"dashboard,omitempty"`
	CreatedAt     *string       `json:"createdAt,omitempty"`
	UpdatedAt     *string       `json:"updatedAt,omitempty"`
}

// AlertChannel is where an alert is sent.
type AlertChannel struct {
	Type      *string `json:"type,omitempty"`
	WebhookID *string `json:"webhookId,omitempty"`
}
