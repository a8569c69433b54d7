package v1alpha1

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
	// +optional
	State *string `json:"state,omitempty"`
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
}

// PipeScaling is how a pipe is sized.
type PipeScaling struct {
	// replicas is the number of replicas that run the pipe.
	// +optional
	Replicas *int64 `json:"replicas,omitempty"`
	// concurrency is the number of concurrent consumers per replica.
	// +optional
	Concurrency *int64 `json:"concurrency,omitempty"`
	// replicaCpuMillicores is the CPU of each replica, in millicores.
	// +optional
	ReplicaCPUMillicores *int64 `json:"replicaCpuMillicores,omitempty"`
	// replicaMemoryGb is the memory of each replica, in gigabytes; a decimal
	// kept exactly as the cloud sent it (0.5 stays 0.5).
	// +optional
	ReplicaMemoryGb *Decimal `json:"replicaMemoryGb,omitempty"`
}

// PipeSource is where a pipe reads from. The cloud sets the member of the
// pipe's kind of source; the others are absent.
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
}

// KafkaSource is a streaming-broker source.
type KafkaSource struct {
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
}

// KafkaOffset is where a streaming-broker pipe starts reading.
type KafkaOffset struct {
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
}

// ObjectStorageSource is an object-storage source.
type ObjectStorageSource struct {
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
}

// KinesisSource is a stream-service source.
type KinesisSource struct {
	// streamName is the name of the stream read.
	// +optional
	StreamName *string `json:"streamName,omitempty"`
	// region of the stream.
	// +optional
	Region *string `json:"region,omitempty"`
	// useEnhancedFanOut is true when the pipe uses enhanced fan-out.
	// +optional
	UseEnhancedFanOut *bool `json:"useEnhancedFanOut,omitempty"`
	// timestamp to start reading from, as the cloud sent it (its unit is not
	// documented).
	// +optional
	Timestamp *int64 `json:"timestamp,omitempty"`
	// iamRole is the cloud role the pipe assumes to read the stream.
	// +optional
	IAMRole *string `json:"iamRole,omitempty"`
}

// PostgresSource is a relational-database source.
type PostgresSource struct {
	// host of the database server.
	// +optional
	Host *string `json:"host,omitempty"`
	// port of the database server.
	// +optional
	Port *int64 `json:"port,omitempty"`
	// database is the name of the database read.
	// +optional
	Database *string `json:"database,omitempty"`
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
