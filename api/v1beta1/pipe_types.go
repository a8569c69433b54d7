package v1beta1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Pipe is one data-ingestion pipe as the management API reports it. Field
// names and nesting are the API's own, so the API documentation can be read
// side by side. Fields the API left out or sent as null are absent.
type Pipe struct {
	// id is the pipe's UUID.
	// +optional
	ID *string `json:"id,omitempty"`
	// serviceId is the UUID of the service that owns the pipe.
	// +optional
	ServiceID *string `json:"serviceId,omitempty"`
	// name of the pipe.
	// +optional
	Name *string `json:"name,omitempty"`
	// state is the pipe's current state as the cloud spells it (for example
	// Running or Stopped). Values the operator does not know are kept as sent.
	// A pipe in a failing state (Failed, InternalError or Degraded, in any
	// case) needs attention: when status.pipes does not fit, those pipes are
	// listed first (see status.pipes).
	// +optional
	State *string `json:"state,omitempty"`
	// since is when the pipe's state was first seen with its current
	// value, by the operator's clock at the end of the sync that saw it
	// (whole seconds). It is kept across syncs, restarts of the operator,
	// truncation of the list (an item cut to its identity keeps it; an item
	// left out keeps it in status.leftOutSince) and upgrades; a state that
	// changes sets it anew, and so does a pipe that leaves the cloud's list
	// and comes back. Absent on an item without an id, and until the first
	// sync that reads the item after an upgrade from a version without it.
	// +optional
	Since *metav1.Time `json:"since,omitempty"`
	// scaling is how the pipe is sized.
	// +optional
	Scaling *PipeScaling `json:"scaling,omitempty"`
	// source is where the pipe reads from. One member per kind of source.
	// +optional
	Source *PipeSource `json:"source,omitempty"`
	// destination is the table of the service the pipe writes to.
	// +optional
	Destination *PipeDestination `json:"destination,omitempty"`
	// fieldMappings map source fields to destination columns.
	// +optional
	// +listType=atomic
	FieldMappings []FieldMapping `json:"fieldMappings,omitzero"`
	// settings are the pipe's tuning settings.
	// +optional
	Settings *PipeSettings `json:"settings,omitempty"`
	// createdAt is when the pipe was created, as the cloud formats it.
	// +optional
	CreatedAt *string `json:"createdAt,omitempty"`
	// updatedAt is when the pipe last changed, as the cloud formats it.
	// +optional
	UpdatedAt *string `json:"updatedAt,omitempty"`

	// sourceKind is set by the operator, not sent by the cloud: the name of
	// the member of source the pipe has (kafka, objectStorage, kinesis,
	// postgres, pubsub, mysql, bigquery, mongodb, or the cloud's own member
	// name for a kind the operator does not know yet), several joined by a
	// comma: the known kinds in the order above, then the others in the
	// order the cloud sent them. Absent when the pipe has no source. servicewatch_pipe_info's source_kind label carries the same
	// value. A member name that carries a credential shows without it, as
	// the paths of otherFields do.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	SourceKind *string `json:"sourceKind,omitempty"`

	// otherFields is set by the operator: what the cloud sent in this pipe
	// that has no typed field above (a member or kind of source the operator
	// does not know yet, a field the spec does not list), and values of
	// known fields that could not be read as their type (left out of their
	// field, and named in the PipesSynced message). Each entry is
	// `path: value`, the path in the API's own names from the pipe down
	// (source.futureKind.topic, scaling.replicaMemoryGb), the value as JSON
	// (strings quoted). Objects and lists are flattened to their leaves; an
	// empty one reads {} or []; null is left out.
	//
	// Bounds: at most 16 entries of at most 256 bytes each (a longer one is
	// cut and ends in "…"), in the order the cloud sent them; when more were
	// sent, a 17th entry says so. Credentials follow the same rules as the
	// typed fields: a member named like a credential (password, passwd, pwd,
	// passphrase, secret, token, privateKey, credentials, connectionString,
	// serviceAccountKey, serviceAccountFile, accessKey, accountKey, apiKey,
	// sharedAccessSignature, cookie, jaasConfig, and names containing these
	// except secretary and tokenizer; sig, signature, X-Amz-Signature, auth,
	// Authorization) reads "<redacted>" and is never descended into; a value
	// that holds a credential (a PEM or PGP private key, name=value,
	// name = value or name: value for such a name, an Authorization header's
	// value) reads "<redacted>"; user info and query strings are removed
	// from URLs, JSON-escaped ones too, and user:password@ from DSNs
	// (user:pass@tcp(host:3306)/db). Member names in paths follow the same
	// rules, and a name that looks like a token reads "<redacted>".
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=17
	// +kubebuilder:validation:items:MaxLength=256
	OtherFields []string `json:"otherFields,omitempty"`

	// omitted is set by the operator when the item is too large for the
	// status: what it leaves out of this item, so that the other items still
	// fit. Each key is the JSON path of a list in the item (lists within
	// lists read path[].member), its value how many entries of it status
	// leaves out: every list is cut to the same number of first entries.
	// When only the item's identity fits, each other member is left out
	// whole and counts 1 under its name. Absent when nothing was left out.
	// +optional
	Omitted map[string]int32 `json:"omitted,omitempty"`
}

// PipeScaling is how a pipe is sized.
type PipeScaling struct {
	// replicas is the number of replicas that run the pipe.
	// +optional
	Replicas *int64 `json:"replicas,omitempty"`
	// concurrency is the number of concurrent consumers per replica.
	// +optional
	Concurrency *int64 `json:"concurrency,omitempty"`
	// replicaCpuMillicores is the CPU of each replica, in millicores. The
	// cloud sends a number, or a string that is either a number of
	// millicores ("500") or a Kubernetes quantity of CPU with a suffix
	// ("500m" is 500, "2k" is 2,000,000); a value that is not a whole
	// number of millicores ("0.5", "1500u") is left out here and kept as
	// sent in otherFields.
	// +optional
	ReplicaCPUMillicores *int64 `json:"replicaCpuMillicores,omitempty"`
	// replicaMemoryGb is the memory of each replica, in gigabytes of 10^9
	// bytes, as the spec defines it; a decimal kept exactly as the cloud sent
	// it (0.5 stays 0.5). The cloud sends a number, or a string that is
	// either a number of gigabytes ("0.5") or a Kubernetes quantity of bytes
	// with a suffix, converted exactly: "2G" reads 2 and "2Gi" (2 × 2^30
	// bytes) reads 2.147483648, not 2; "512Mi" reads 0.536870912. A value
	// whose exact conversion has more digits than a JSON number keeps
	// through the API server (about 15 significant digits) is left out here
	// and kept as sent in otherFields.
	// +optional
	ReplicaMemoryGb *Decimal `json:"replicaMemoryGb,omitempty"`
}

// PipeSource is where a pipe reads from. The cloud sets the member of the
// pipe's kind of source; the others are absent. A member of a kind the
// operator does not know is shown in the pipe's otherFields (and its name in
// sourceKind).
type PipeSource struct {
	// kafka is a streaming-broker source.
	// +optional
	Kafka *KafkaSource `json:"kafka,omitempty"`
	// objectStorage is an object-storage source.
	// +optional
	ObjectStorage *ObjectStorageSource `json:"objectStorage,omitempty"`
	// kinesis is a stream-service source.
	// +optional
	Kinesis *KinesisSource `json:"kinesis,omitempty"`
	// postgres is a relational-database source.
	// +optional
	Postgres *PostgresSource `json:"postgres,omitempty"`
	// pubsub is a publish-subscribe topic source.
	// +optional
	PubSub *PubSubSource `json:"pubsub,omitempty"`
	// mysql is a MySQL (or compatible) database source.
	// +optional
	MySQL *MySQLSource `json:"mysql,omitempty"`
	// bigquery is a data-warehouse source read through a staging path.
	// +optional
	BigQuery *BigQuerySource `json:"bigquery,omitempty"`
	// mongodb is a document-database source.
	// +optional
	MongoDB *MongoDBSource `json:"mongodb,omitempty"`
}

// SourceCommon are the fields every kind of source carries.
type SourceCommon struct {
	// type is the variant of the source as the cloud spells it (for example
	// the broker's product, or rdsmysql for a managed MySQL).
	// +optional
	Type *string `json:"type,omitempty"`
	// format is the format of the records read (for example JSONEachRow).
	// +optional
	Format *string `json:"format,omitempty"`
	// authentication is the method the pipe authenticates to the source with
	// (for example PLAIN, IAM_ROLE or basic). The credentials themselves are
	// never shown.
	// +optional
	Authentication *string `json:"authentication,omitempty"`
}

// SourceTLS are the TLS settings of a database source.
type SourceTLS struct {
	// disableTls is true when the connection is not encrypted.
	// +optional
	DisableTLS *bool `json:"disableTls,omitempty"`
	// skipCertVerification is true when the server's certificate is not
	// verified.
	// +optional
	SkipCertVerification *bool `json:"skipCertVerification,omitempty"`
	// tlsHost is the host name the server's certificate is checked against.
	// +optional
	TLSHost *string `json:"tlsHost,omitempty"`
	// caCertificate is the CA certificate that signs the server's
	// certificate (public data, not a credential).
	// +optional
	CACertificate *string `json:"caCertificate,omitempty"`
}

// KafkaSource is a streaming-broker source.
type KafkaSource struct {
	SourceCommon `json:",inline"`
	// brokers are the bootstrap brokers.
	// +optional
	Brokers *string `json:"brokers,omitempty"`
	// topics are the topics read.
	// +optional
	Topics *string `json:"topics,omitempty"`
	// consumerGroup is the consumer group the pipe joins.
	// +optional
	ConsumerGroup *string `json:"consumerGroup,omitempty"`
	// iamRole is the cloud role the pipe assumes to reach the brokers.
	// +optional
	IAMRole *string `json:"iamRole,omitempty"`
	// offset is where reading starts.
	// +optional
	Offset *KafkaOffset `json:"offset,omitempty"`
	// schemaRegistry is the schema registry used to decode messages.
	// +optional
	SchemaRegistry *SchemaRegistry `json:"schemaRegistry,omitempty"`
	// caCertificate is the CA certificate that signs the brokers'
	// certificates (public data, not a credential).
	// +optional
	CACertificate *string `json:"caCertificate,omitempty"`
	// reversePrivateEndpointIds are the reverse private endpoints the pipe
	// uses to reach the brokers.
	// +optional
	// +listType=atomic
	ReversePrivateEndpointIDs []string `json:"reversePrivateEndpointIds,omitzero"`
	// exactlyOnce is true when records are delivered exactly once.
	// +optional
	ExactlyOnce *bool `json:"exactlyOnce,omitempty"`
}

// KafkaOffset is where a streaming-broker pipe starts reading.
type KafkaOffset struct {
	// strategy is where reading starts (for example from_beginning,
	// from_latest or from_timestamp).
	// +optional
	Strategy *string `json:"strategy,omitempty"`
	// timestamp to start from, shaped like a date-time without seconds or
	// zone, as the cloud sent it.
	// +optional
	Timestamp *string `json:"timestamp,omitempty"`
}

// SchemaRegistry is a schema registry that messages are decoded with.
type SchemaRegistry struct {
	// url of the schema registry.
	// +optional
	URL *string `json:"url,omitempty"`
	// caCertificate is the CA certificate of the schema registry.
	// +optional
	CACertificate *string `json:"caCertificate,omitempty"`
	// authentication is the method the pipe authenticates to the schema
	// registry with (for example PLAIN). The credentials are never shown.
	// +optional
	Authentication *string `json:"authentication,omitempty"`
}

// ObjectStorageSource is an object-storage source.
type ObjectStorageSource struct {
	SourceCommon `json:",inline"`
	// url of the objects to read; may contain wildcard patterns.
	// +optional
	URL *string `json:"url,omitempty"`
	// delimiter between records.
	// +optional
	Delimiter *string `json:"delimiter,omitempty"`
	// compression of the objects; one value means automatic detection.
	// +optional
	Compression *string `json:"compression,omitempty"`
	// isContinuous is true when the pipe keeps reading new objects.
	// +optional
	IsContinuous *bool `json:"isContinuous,omitempty"`
	// queueUrl is the URL of the notification queue that announces new
	// objects.
	// +optional
	QueueURL *string `json:"queueUrl,omitempty"`
	// iamRole is the cloud role the pipe assumes to read the objects.
	// +optional
	IAMRole *string `json:"iamRole,omitempty"`
	// connectionString is a credential, so its value is never copied: it
	// reads "<redacted>" when the cloud returned a non-empty value.
	// +optional
	ConnectionString *string `json:"connectionString,omitempty"`
	// path pattern inside the container.
	// +optional
	Path *string `json:"path,omitempty"`
	// azureContainerName is the name of the container read.
	// +optional
	AzureContainerName *string `json:"azureContainerName,omitempty"`
	// skipInitialLoad is true when the pipe skips the initial load and reads
	// only the objects its notification queue announces.
	// +optional
	SkipInitialLoad *bool `json:"skipInitialLoad,omitempty"`
	// startAfter is an object key: the initial load skips every object up to
	// and including it.
	// +optional
	StartAfter *string `json:"startAfter,omitempty"`
}

// KinesisSource is a stream-service source.
type KinesisSource struct {
	SourceCommon `json:",inline"`
	// streamName is the name of the stream read.
	// +optional
	StreamName *string `json:"streamName,omitempty"`
	// region of the stream.
	// +optional
	Region *string `json:"region,omitempty"`
	// useEnhancedFanOut is true when the pipe uses enhanced fan-out.
	// +optional
	UseEnhancedFanOut *bool `json:"useEnhancedFanOut,omitempty"`
	// iteratorType is where reading starts (for example TRIM_HORIZON,
	// LATEST or AT_TIMESTAMP).
	// +optional
	IteratorType *string `json:"iteratorType,omitempty"`
	// timestamp to start reading from, an integer as the spec types it (its
	// unit is not documented). A numeric string ("1767225600") is shown as
	// its integer; a value that is not a whole number (such as the string
	// 2026-01-01T00:00, which some services send) is left out here and kept
	// as sent in otherFields.
	// +optional
	Timestamp *int64 `json:"timestamp,omitempty"`
	// iamRole is the cloud role the pipe assumes to read the stream.
	// +optional
	IAMRole *string `json:"iamRole,omitempty"`
}

// PostgresSource is a relational-database source.
type PostgresSource struct {
	SourceCommon `json:",inline"`
	SourceTLS    `json:",inline"`
	// host of the database server.
	// +optional
	Host *string `json:"host,omitempty"`
	// port of the database server.
	// +optional
	Port *int64 `json:"port,omitempty"`
	// database is the name of the database read.
	// +optional
	Database *string `json:"database,omitempty"`
	// iamRole is the cloud role the pipe assumes to reach the database (with
	// authentication IAM_ROLE).
	// +optional
	IAMRole *string `json:"iamRole,omitempty"`
	// settings tune the replication.
	// +optional
	Settings *PostgresSettings `json:"settings,omitempty"`
	// tableMappings map source tables to destination tables.
	// +optional
	// +listType=atomic
	TableMappings []PostgresTableMapping `json:"tableMappings,omitzero"`
}

// PostgresSettings tune how a relational-database source is replicated.
type PostgresSettings struct {
	// replicationMode is how tables are replicated (for example cdc,
	// snapshot or cdc_only).
	// +optional
	ReplicationMode *string `json:"replicationMode,omitempty"`
	// syncIntervalSeconds is the time between syncs, in seconds.
	// +optional
	SyncIntervalSeconds *int64 `json:"syncIntervalSeconds,omitempty"`
	// pullBatchSize is the number of rows pulled per batch.
	// +optional
	PullBatchSize *int64 `json:"pullBatchSize,omitempty"`
	// publicationName is the publication replicated.
	// +optional
	PublicationName *string `json:"publicationName,omitempty"`
	// replicationSlotName is the replication slot used.
	// +optional
	ReplicationSlotName *string `json:"replicationSlotName,omitempty"`
	// allowNullableColumns is true when nullable columns are replicated.
	// +optional
	AllowNullableColumns *bool `json:"allowNullableColumns,omitempty"`
	// initialLoadParallelism is the parallelism of the initial load.
	// +optional
	InitialLoadParallelism *int64 `json:"initialLoadParallelism,omitempty"`
	// snapshotNumRowsPerPartition is the number of rows per snapshot
	// partition.
	// +optional
	SnapshotNumRowsPerPartition *int64 `json:"snapshotNumRowsPerPartition,omitempty"`
	// snapshotNumberOfParallelTables is the number of tables snapshotted in
	// parallel.
	// +optional
	SnapshotNumberOfParallelTables *int64 `json:"snapshotNumberOfParallelTables,omitempty"`
	// enableFailoverSlots is true when failover replication slots are used.
	// +optional
	EnableFailoverSlots *bool `json:"enableFailoverSlots,omitempty"`
	// deleteOnMerge is true when a row deleted in the source is deleted from
	// a ReplacingMergeTree destination when parts merge, rather than kept
	// marked as deleted.
	// +optional
	DeleteOnMerge *bool `json:"deleteOnMerge,omitempty"`
}

// PostgresTableMapping maps one source table to a destination table.
type PostgresTableMapping struct {
	// sourceSchemaName is the schema of the source table.
	// +optional
	SourceSchemaName *string `json:"sourceSchemaName,omitempty"`
	// sourceTable is the name of the source table.
	// +optional
	SourceTable *string `json:"sourceTable,omitempty"`
	// targetTable is the name of the destination table.
	// +optional
	TargetTable *string `json:"targetTable,omitempty"`
	// excludedColumns are source columns that are not replicated.
	// +optional
	// +listType=atomic
	ExcludedColumns []string `json:"excludedColumns,omitzero"`
	// useCustomSortingKey is true when sortingKeys replaces the default.
	// +optional
	UseCustomSortingKey *bool `json:"useCustomSortingKey,omitempty"`
	// sortingKeys are the columns the destination table is sorted by.
	// +optional
	// +listType=atomic
	SortingKeys []string `json:"sortingKeys,omitzero"`
	// tableEngine is the engine of the destination table (for example
	// MergeTree or ReplacingMergeTree).
	// +optional
	TableEngine *string `json:"tableEngine,omitempty"`
	// partitionKey is the source column the initial load splits the table
	// by, to load its parts in parallel.
	// +optional
	PartitionKey *string `json:"partitionKey,omitempty"`
	// partitionByExpr is the PARTITION BY expression of the destination
	// table.
	// +optional
	PartitionByExpr *string `json:"partitionByExpr,omitempty"`
}

// PipeDestination is the table a pipe writes to.
type PipeDestination struct {
	// database of the destination table.
	// +optional
	Database *string `json:"database,omitempty"`
	// table is the name of the destination table.
	// +optional
	Table *string `json:"table,omitempty"`
	// managedTable is true when the cloud created and manages the table.
	// +optional
	ManagedTable *bool `json:"managedTable,omitempty"`
	// tableDefinition is how a managed table is defined.
	// +optional
	TableDefinition *TableDefinition `json:"tableDefinition,omitempty"`
	// columns of the destination table.
	// +optional
	// +listType=atomic
	Columns []DestinationColumn `json:"columns,omitzero"`
}

// TableDefinition is how a managed destination table is defined.
type TableDefinition struct {
	// engine is the table engine.
	// +optional
	Engine *TableEngine `json:"engine,omitempty"`
	// sortingKey are the columns the table is sorted by.
	// +optional
	// +listType=atomic
	SortingKey []string `json:"sortingKey,omitzero"`
	// partitionBy is the partitioning expression.
	// +optional
	PartitionBy *string `json:"partitionBy,omitempty"`
	// primaryKey is the primary key expression.
	// +optional
	PrimaryKey *string `json:"primaryKey,omitempty"`
}

// TableEngine is the engine of a managed destination table.
type TableEngine struct {
	// type of the engine (for example MergeTree or ReplacingMergeTree).
	// +optional
	Type *string `json:"type,omitempty"`
	// versionColumnId is the column that versions rows.
	// +optional
	VersionColumnID *string `json:"versionColumnId,omitempty"`
	// columnIds are the columns the engine uses.
	// +optional
	// +listType=atomic
	ColumnIDs []string `json:"columnIds,omitzero"`
}

// DestinationColumn is one column of a destination table.
type DestinationColumn struct {
	// name of the column.
	// +optional
	Name *string `json:"name,omitempty"`
	// type of the column, in the warehouse's type syntax.
	// +optional
	Type *string `json:"type,omitempty"`
}

// FieldMapping maps one source field to one destination column.
type FieldMapping struct {
	// sourceField is the field in the source records.
	// +optional
	SourceField *string `json:"sourceField,omitempty"`
	// destinationField is the destination column.
	// +optional
	DestinationField *string `json:"destinationField,omitempty"`
}

// PipeSettings are a pipe's tuning settings. Names are the cloud's own,
// snake_case with a neutral prefix.
type PipeSettings struct {
	// streaming_max_insert_wait_ms is the longest a streaming insert waits,
	// in milliseconds.
	// +optional
	StreamingMaxInsertWaitMs *int64 `json:"streaming_max_insert_wait_ms,omitempty"`
	// object_storage_concurrency is the number of objects read at once.
	// +optional
	ObjectStorageConcurrency *int64 `json:"object_storage_concurrency,omitempty"`
	// object_storage_polling_interval_ms is how often object storage is
	// polled, in milliseconds.
	// +optional
	ObjectStoragePollingIntervalMs *int64 `json:"object_storage_polling_interval_ms,omitempty"`
	// object_storage_max_insert_bytes is the largest insert from object
	// storage, in bytes.
	// +optional
	ObjectStorageMaxInsertBytes *int64 `json:"object_storage_max_insert_bytes,omitempty"`
	// object_storage_max_file_count is the most objects per insert.
	// +optional
	ObjectStorageMaxFileCount *int64 `json:"object_storage_max_file_count,omitempty"`
	// warehouse_max_threads is the most threads the warehouse uses.
	// +optional
	WarehouseMaxThreads *int64 `json:"warehouse_max_threads,omitempty"`
	// warehouse_max_insert_threads is the most insert threads.
	// +optional
	WarehouseMaxInsertThreads *int64 `json:"warehouse_max_insert_threads,omitempty"`
	// warehouse_min_insert_block_size_bytes is the smallest insert block, in
	// bytes.
	// +optional
	WarehouseMinInsertBlockSizeBytes *int64 `json:"warehouse_min_insert_block_size_bytes,omitempty"`
	// warehouse_max_download_threads is the most download threads.
	// +optional
	WarehouseMaxDownloadThreads *int64 `json:"warehouse_max_download_threads,omitempty"`
	// warehouse_parallel_distributed_insert_select is the parallel
	// distributed insert-select mode.
	// +optional
	WarehouseParallelDistributedInsertSelect *int64 `json:"warehouse_parallel_distributed_insert_select,omitempty"`
	// object_storage_use_cluster_function is true when object storage is
	// read by the whole cluster.
	// +optional
	ObjectStorageUseClusterFunction *bool `json:"object_storage_use_cluster_function,omitempty"`
	// warehouse_parallel_view_processing is true when views are processed
	// in parallel.
	// +optional
	WarehouseParallelViewProcessing *bool `json:"warehouse_parallel_view_processing,omitempty"`
}

// PubSubSource is a publish-subscribe topic source.
type PubSubSource struct {
	SourceCommon `json:",inline"`
	// projectId is the cloud project of the topic.
	// +optional
	ProjectID *string `json:"projectId,omitempty"`
	// topic is the topic read.
	// +optional
	Topic *string `json:"topic,omitempty"`
	// subscription is the subscription the pipe reads through.
	// +optional
	Subscription *string `json:"subscription,omitempty"`
	// seekType is where the subscription starts (for example latest,
	// timestamp or snapshot).
	// +optional
	SeekType *string `json:"seekType,omitempty"`
	// seekTimestamp is the time the subscription starts from, as sent.
	// +optional
	SeekTimestamp *string `json:"seekTimestamp,omitempty"`
	// seekSnapshot is the snapshot the subscription starts from.
	// +optional
	SeekSnapshot *string `json:"seekSnapshot,omitempty"`
	// filter is the subscription's message filter.
	// +optional
	Filter *string `json:"filter,omitempty"`
	// enableOrdering is true when messages are delivered in order.
	// +optional
	EnableOrdering *bool `json:"enableOrdering,omitempty"`
	// ackDeadline is the subscription's acknowledgement deadline, in
	// seconds, an integer as the publish-subscribe service types it. A
	// numeric string ("60") is shown as its integer; a value that is not a
	// whole number of seconds ("10s") is left out here and kept as sent in
	// otherFields.
	// +optional
	AckDeadline *int64 `json:"ackDeadline,omitempty"`
}

// MySQLSource is a MySQL (or compatible) database source.
type MySQLSource struct {
	SourceCommon `json:",inline"`
	SourceTLS    `json:",inline"`
	// host of the database server.
	// +optional
	Host *string `json:"host,omitempty"`
	// port of the database server.
	// +optional
	Port *int64 `json:"port,omitempty"`
	// iamRole is the cloud role the pipe assumes to reach the database.
	// +optional
	IAMRole *string `json:"iamRole,omitempty"`
	// serverId is the replication client's server ID.
	// +optional
	ServerID *int64 `json:"serverId,omitempty"`
	// settings tune the replication.
	// +optional
	Settings *DatabaseSourceSettings `json:"settings,omitempty"`
	// tableMappings map source tables to destination tables.
	// +optional
	// +listType=atomic
	TableMappings []MySQLTableMapping `json:"tableMappings,omitzero"`
}

// BigQuerySource is a data-warehouse source, read through a staging path.
type BigQuerySource struct {
	SourceCommon `json:",inline"`
	// projectId is the cloud project read.
	// +optional
	ProjectID *string `json:"projectId,omitempty"`
	// snapshotStagingPath is the object-storage path snapshots are staged in.
	// +optional
	SnapshotStagingPath *string `json:"snapshotStagingPath,omitempty"`
	// settings tune the replication.
	// +optional
	Settings *DatabaseSourceSettings `json:"settings,omitempty"`
	// tableMappings map source tables to destination tables.
	// +optional
	// +listType=atomic
	TableMappings []BigQueryTableMapping `json:"tableMappings,omitzero"`
}

// MongoDBSource is a document-database source. The cloud sends a connection
// URI, which may carry a user, a password and credential query parameters:
// it is shown without them, and its host and database are also shown on
// their own.
type MongoDBSource struct {
	SourceCommon `json:",inline"`
	SourceTLS    `json:",inline"`
	// uri is the connection URI, scrubbed as every connection string in
	// status is: its user info (user and password) and the options that
	// carry secrets (tlsCertificateKeyFilePassword, sslPEMKeyPassword,
	// authMechanismProperties, which may hold AWS_SESSION_TOKEN, and any
	// option named or valued like a credential) are removed, its other
	// options kept, so mongodb://u:p@h1,h2/db?replicaSet=rs0&password=x
	// reads mongodb://h1,h2/db?replicaSet=rs0. A value that is not a string
	// is left out, and kept in otherFields as "<redacted>".
	// +optional
	URI *string `json:"uri,omitempty"`
	// host is the host list of the connection URI (for example
	// cluster0.example.net, or h1:27017,h2:27017), without user, password or
	// query.
	// +optional
	Host *string `json:"host,omitempty"`
	// database is the database named in the path of the connection URI.
	// +optional
	Database *string `json:"database,omitempty"`
	// readPreference is the replica-set read preference (for example
	// secondaryPreferred).
	// +optional
	ReadPreference *string `json:"readPreference,omitempty"`
	// settings tune the replication.
	// +optional
	Settings *DatabaseSourceSettings `json:"settings,omitempty"`
	// tableMappings map source collections to destination tables.
	// +optional
	// +listType=atomic
	TableMappings []CollectionMapping `json:"tableMappings,omitzero"`
}

// DatabaseSourceSettings tune how a MySQL, warehouse or document-database
// source is replicated. Each kind sends some of them: replicationMechanism
// and useCompression are MySQL's, useJsonNativeFormat the document
// database's, allowNullableColumns MySQL's and the warehouse's, and
// deleteOnMerge MySQL's and the document database's.
type DatabaseSourceSettings struct {
	// replicationMode is how tables are replicated (for example cdc,
	// snapshot or cdc_only).
	// +optional
	ReplicationMode *string `json:"replicationMode,omitempty"`
	// syncIntervalSeconds is the time between syncs, in seconds.
	// +optional
	SyncIntervalSeconds *int64 `json:"syncIntervalSeconds,omitempty"`
	// pullBatchSize is the number of rows pulled per batch.
	// +optional
	PullBatchSize *int64 `json:"pullBatchSize,omitempty"`
	// initialLoadParallelism is the parallelism of the initial load.
	// +optional
	InitialLoadParallelism *int64 `json:"initialLoadParallelism,omitempty"`
	// snapshotNumRowsPerPartition is the number of rows per snapshot
	// partition.
	// +optional
	SnapshotNumRowsPerPartition *int64 `json:"snapshotNumRowsPerPartition,omitempty"`
	// snapshotNumberOfParallelTables is the number of tables snapshotted in
	// parallel.
	// +optional
	SnapshotNumberOfParallelTables *int64 `json:"snapshotNumberOfParallelTables,omitempty"`
	// replicationMechanism is how changes are read from the binary log (for
	// example GTID or FILEPOS).
	// +optional
	ReplicationMechanism *string `json:"replicationMechanism,omitempty"`
	// useCompression is true when the replication connection is compressed.
	// +optional
	UseCompression *bool `json:"useCompression,omitempty"`
	// allowNullableColumns is true when nullable columns are replicated as
	// Nullable.
	// +optional
	AllowNullableColumns *bool `json:"allowNullableColumns,omitempty"`
	// deleteOnMerge is true when a row deleted in the source is deleted from
	// a ReplacingMergeTree destination when parts merge, rather than kept
	// marked as deleted.
	// +optional
	DeleteOnMerge *bool `json:"deleteOnMerge,omitempty"`
	// useJsonNativeFormat is true when documents are stored in the
	// warehouse's native JSON type rather than as strings.
	// +optional
	UseJSONNativeFormat *bool `json:"useJsonNativeFormat,omitempty"`
}

// MySQLTableMapping maps one table of a MySQL source to a destination table.
type MySQLTableMapping struct {
	// sourceDatabaseName is the database of the source table, as some
	// services name it.
	// +optional
	SourceDatabaseName *string `json:"sourceDatabaseName,omitempty"`
	// sourceSchemaName is the database (MySQL's schema) of the source
	// table, as the vendor's clients name it.
	// +optional
	SourceSchemaName *string `json:"sourceSchemaName,omitempty"`
	TableMapping     `json:",inline"`
	// partitionKey is the source column the initial load splits the table
	// by, to load its parts in parallel.
	// +optional
	PartitionKey *string `json:"partitionKey,omitempty"`
}

// BigQueryTableMapping maps one table of a warehouse source to a destination
// table.
type BigQueryTableMapping struct {
	// sourceDatasetName is the dataset of the source table.
	// +optional
	SourceDatasetName *string `json:"sourceDatasetName,omitempty"`
	TableMapping      `json:",inline"`
}

// TableMapping are the fields of a table mapping of a MySQL or warehouse
// source.
type TableMapping struct {
	// sourceTable is the name of the source table.
	// +optional
	SourceTable *string `json:"sourceTable,omitempty"`
	// targetTable is the name of the destination table.
	// +optional
	TargetTable *string `json:"targetTable,omitempty"`
	// excludedColumns are source columns that are not replicated.
	// +optional
	// +listType=atomic
	ExcludedColumns []string `json:"excludedColumns,omitzero"`
	// useCustomSortingKey is true when sortingKeys replaces the default.
	// +optional
	UseCustomSortingKey *bool `json:"useCustomSortingKey,omitempty"`
	// sortingKeys are the columns the destination table is sorted by.
	// +optional
	// +listType=atomic
	SortingKeys []string `json:"sortingKeys,omitzero"`
	// tableEngine is the engine of the destination table.
	// +optional
	TableEngine *string `json:"tableEngine,omitempty"`
}

// CollectionMapping maps one collection of a document-database source to a
// destination table.
type CollectionMapping struct {
	// sourceDatabaseName is the database of the source collection.
	// +optional
	SourceDatabaseName *string `json:"sourceDatabaseName,omitempty"`
	// sourceCollection is the name of the source collection.
	// +optional
	SourceCollection *string `json:"sourceCollection,omitempty"`
	// targetTable is the name of the destination table.
	// +optional
	TargetTable *string `json:"targetTable,omitempty"`
	// tableEngine is the engine of the destination table.
	// +optional
	TableEngine *string `json:"tableEngine,omitempty"`
}
