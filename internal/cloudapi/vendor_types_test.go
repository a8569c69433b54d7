package cloudapi_test

import (
	"testing"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
)

// Issue 28, part 2: the fields the vendor's own clients type for the real
// kinds of source (its Terraform provider's ClickPipe models) are typed in
// status too, by the spec-types rule: a value that converts without loss is
// shown converted, one that does not is left out of its field and kept as
// sent in otherFields, and the pipe and the list survive. Each field has a
// row with its converted form and one with a form that does not convert.
func TestListPipesTypesWhatTheVendorsClientsType(t *testing.T) {
	postgres := func(pg *swv1.PostgresSource, other ...string) swv1.Pipe {
		return swv1.Pipe{Source: &swv1.PipeSource{Postgres: pg}, SourceKind: ptr("postgres"), OtherFields: other}
	}
	mysql := func(m *swv1.MySQLSource, other ...string) swv1.Pipe {
		return swv1.Pipe{Source: &swv1.PipeSource{MySQL: m}, SourceKind: ptr("mysql"), OtherFields: other}
	}
	bigquery := func(b *swv1.BigQuerySource, other ...string) swv1.Pipe {
		return swv1.Pipe{Source: &swv1.PipeSource{BigQuery: b}, SourceKind: ptr("bigquery"), OtherFields: other}
	}
	mongodb := func(m *swv1.MongoDBSource, other ...string) swv1.Pipe {
		return swv1.Pipe{Source: &swv1.PipeSource{MongoDB: m}, SourceKind: ptr("mongodb"), OtherFields: other}
	}
	objectStorage := func(o *swv1.ObjectStorageSource, other ...string) swv1.Pipe {
		return swv1.Pipe{Source: &swv1.PipeSource{ObjectStorage: o}, SourceKind: ptr("objectStorage"), OtherFields: other}
	}
	settings := func(s swv1.DatabaseSourceSettings) *swv1.DatabaseSourceSettings { return &s }
	tests := []struct {
		name, pipe string
		want       swv1.Pipe
		leftOut    string // "" when nothing is left out
	}{
		// postgres
		{name: "postgres iamRole", pipe: `{"source":{"postgres":{"iamRole":"arn:aws:iam::1:role/r"}}}`,
			want: postgres(&swv1.PostgresSource{IAMRole: ptr("arn:aws:iam::1:role/r")})},
		{name: "postgres iamRole not a string", pipe: `{"source":{"postgres":{"iamRole":{"arn":"r"}}}}`,
			want: postgres(&swv1.PostgresSource{}, `source.postgres.iamRole.arn: "r"`), leftOut: "source.postgres.iamRole"},
		{name: "postgres deleteOnMerge", pipe: `{"source":{"postgres":{"settings":{"deleteOnMerge":"TRUE"}}}}`,
			want: postgres(&swv1.PostgresSource{Settings: &swv1.PostgresSettings{DeleteOnMerge: ptr(true)}})},
		{name: "postgres deleteOnMerge not a boolean", pipe: `{"source":{"postgres":{"settings":{"deleteOnMerge":"yes"}}}}`,
			want:    postgres(&swv1.PostgresSource{Settings: &swv1.PostgresSettings{}}, `source.postgres.settings.deleteOnMerge: "yes"`),
			leftOut: "source.postgres.settings.deleteOnMerge"},
		{name: "postgres table mapping's engine and partitioning",
			pipe: `{"source":{"postgres":{"tableMappings":[{"tableEngine":"ReplacingMergeTree","partitionKey":"id","partitionByExpr":"toYYYYMM(ts)"}]}}}`,
			want: postgres(&swv1.PostgresSource{TableMappings: []swv1.PostgresTableMapping{{
				TableEngine: ptr("ReplacingMergeTree"), PartitionKey: ptr("id"), PartitionByExpr: ptr("toYYYYMM(ts)"),
			}}})},
		{name: "postgres table mapping's tableEngine not a string",
			pipe: `{"source":{"postgres":{"tableMappings":[{"sourceTable":"t","tableEngine":{"type":"MergeTree"}}]}}}`,
			want: postgres(&swv1.PostgresSource{TableMappings: []swv1.PostgresTableMapping{{SourceTable: ptr("t")}}},
				`source.postgres.tableMappings[0].tableEngine.type: "MergeTree"`),
			leftOut: "source.postgres.tableMappings[0].tableEngine"},
		{name: "postgres table mapping's partitionKey not a string",
			pipe: `{"source":{"postgres":{"tableMappings":[{"partitionKey":["a","b"]}]}}}`,
			want: postgres(&swv1.PostgresSource{TableMappings: []swv1.PostgresTableMapping{{}}},
				`source.postgres.tableMappings[0].partitionKey[0]: "a"`, `source.postgres.tableMappings[0].partitionKey[1]: "b"`),
			leftOut: "source.postgres.tableMappings[0].partitionKey"},
		{name: "postgres table mapping's partitionByExpr not a string",
			pipe: `{"source":{"postgres":{"tableMappings":[{"partitionByExpr":{}}]}}}`,
			want: postgres(&swv1.PostgresSource{TableMappings: []swv1.PostgresTableMapping{{}}},
				`source.postgres.tableMappings[0].partitionByExpr: {}`),
			leftOut: "source.postgres.tableMappings[0].partitionByExpr"},

		// mysql
		{name: "mysql replication settings",
			pipe: `{"source":{"mysql":{"settings":{"replicationMechanism":"GTID","useCompression":"false","allowNullableColumns":true,"deleteOnMerge":"true"}}}}`,
			want: mysql(&swv1.MySQLSource{Settings: settings(swv1.DatabaseSourceSettings{
				ReplicationMechanism: ptr("GTID"), UseCompression: ptr(false), AllowNullableColumns: ptr(true), DeleteOnMerge: ptr(true),
			})})},
		{name: "mysql replicationMechanism not a string", pipe: `{"source":{"mysql":{"settings":{"replicationMechanism":["GTID"]}}}}`,
			want:    mysql(&swv1.MySQLSource{Settings: settings(swv1.DatabaseSourceSettings{})}, `source.mysql.settings.replicationMechanism[0]: "GTID"`),
			leftOut: "source.mysql.settings.replicationMechanism"},
		{name: "mysql useCompression not a boolean", pipe: `{"source":{"mysql":{"settings":{"useCompression":1}}}}`,
			want:    mysql(&swv1.MySQLSource{Settings: settings(swv1.DatabaseSourceSettings{})}, `source.mysql.settings.useCompression: 1`),
			leftOut: "source.mysql.settings.useCompression"},
		{name: "mysql allowNullableColumns not a boolean", pipe: `{"source":{"mysql":{"settings":{"allowNullableColumns":"sometimes"}}}}`,
			want:    mysql(&swv1.MySQLSource{Settings: settings(swv1.DatabaseSourceSettings{})}, `source.mysql.settings.allowNullableColumns: "sometimes"`),
			leftOut: "source.mysql.settings.allowNullableColumns"},
		{name: "mysql deleteOnMerge not a boolean", pipe: `{"source":{"mysql":{"settings":{"deleteOnMerge":{}}}}}`,
			want:    mysql(&swv1.MySQLSource{Settings: settings(swv1.DatabaseSourceSettings{})}, `source.mysql.settings.deleteOnMerge: {}`),
			leftOut: "source.mysql.settings.deleteOnMerge"},
		{name: "mysql table mapping's schema and partitionKey",
			pipe: `{"source":{"mysql":{"tableMappings":[{"sourceSchemaName":"crm","sourceTable":"t","partitionKey":"id","tableEngine":"MergeTree"}]}}}`,
			want: mysql(&swv1.MySQLSource{TableMappings: []swv1.MySQLTableMapping{{
				SourceSchemaName: ptr("crm"), PartitionKey: ptr("id"), TableMapping: swv1.TableMapping{SourceTable: ptr("t"), TableEngine: ptr("MergeTree")},
			}}})},
		{name: "mysql table mapping's sourceSchemaName not a string",
			pipe: `{"source":{"mysql":{"tableMappings":[{"sourceSchemaName":{"name":"crm"},"sourceTable":"t"}]}}}`,
			want: mysql(&swv1.MySQLSource{TableMappings: []swv1.MySQLTableMapping{{TableMapping: swv1.TableMapping{SourceTable: ptr("t")}}}},
				`source.mysql.tableMappings[0].sourceSchemaName.name: "crm"`),
			leftOut: "source.mysql.tableMappings[0].sourceSchemaName"},
		{name: "mysql table mapping's partitionKey not a string",
			pipe:    `{"source":{"mysql":{"tableMappings":[{"partitionKey":[]}]}}}`,
			want:    mysql(&swv1.MySQLSource{TableMappings: []swv1.MySQLTableMapping{{}}}, `source.mysql.tableMappings[0].partitionKey: []`),
			leftOut: "source.mysql.tableMappings[0].partitionKey"},

		// bigquery
		{name: "bigquery allowNullableColumns", pipe: `{"source":{"bigquery":{"settings":{"allowNullableColumns":"false"}}}}`,
			want: bigquery(&swv1.BigQuerySource{Settings: settings(swv1.DatabaseSourceSettings{AllowNullableColumns: ptr(false)})})},
		{name: "bigquery allowNullableColumns not a boolean", pipe: `{"source":{"bigquery":{"settings":{"allowNullableColumns":"no"}}}}`,
			want:    bigquery(&swv1.BigQuerySource{Settings: settings(swv1.DatabaseSourceSettings{})}, `source.bigquery.settings.allowNullableColumns: "no"`),
			leftOut: "source.bigquery.settings.allowNullableColumns"},

		// mongodb
		{name: "mongodb replication settings", pipe: `{"source":{"mongodb":{"settings":{"deleteOnMerge":false,"useJsonNativeFormat":"true"}}}}`,
			want: mongodb(&swv1.MongoDBSource{Settings: settings(swv1.DatabaseSourceSettings{DeleteOnMerge: ptr(false), UseJSONNativeFormat: ptr(true)})})},
		{name: "mongodb useJsonNativeFormat not a boolean", pipe: `{"source":{"mongodb":{"settings":{"useJsonNativeFormat":"native"}}}}`,
			want:    mongodb(&swv1.MongoDBSource{Settings: settings(swv1.DatabaseSourceSettings{})}, `source.mongodb.settings.useJsonNativeFormat: "native"`),
			leftOut: "source.mongodb.settings.useJsonNativeFormat"},
		{name: "mongodb deleteOnMerge not a boolean", pipe: `{"source":{"mongodb":{"settings":{"deleteOnMerge":0}}}}`,
			want:    mongodb(&swv1.MongoDBSource{Settings: settings(swv1.DatabaseSourceSettings{})}, `source.mongodb.settings.deleteOnMerge: 0`),
			leftOut: "source.mongodb.settings.deleteOnMerge"},
		{name: "mongodb uri without user info and secret options, with its harmless ones",
			pipe: `{"source":{"mongodb":{"uri":"mongodb://app:MARKER-PASSWORD@h1:27017,h2:27017/shop?replicaSet=rs0&retryWrites=true&authSource=admin` +
				`&tlsCertificateKeyFilePassword=MARKER-KEY-PASSWORD&authMechanismProperties=AWS_SESSION_TOKEN:MARKER-TOKEN"}}}`,
			want: mongodb(&swv1.MongoDBSource{URI: ptr("mongodb://h1:27017,h2:27017/shop?replicaSet=rs0&retryWrites=true&authSource=admin"),
				Host: ptr("h1:27017,h2:27017"), Database: ptr("shop")})},
		{name: "mongodb uri whose password holds '/' and '?' unencoded",
			pipe: `{"source":{"mongodb":{"uri":"mongodb+srv://app:MARKER/PASS?WORD@cluster0.example.invalid/db"}}}`,
			want: mongodb(&swv1.MongoDBSource{URI: ptr("mongodb+srv://cluster0.example.invalid/db"), Host: ptr("cluster0.example.invalid"), Database: ptr("db")})},
		{name: "mongodb uri not a string", pipe: `{"source":{"mongodb":{"uri":{"user":"app","password":"MARKER-PASSWORD"}}}}`,
			want:    mongodb(&swv1.MongoDBSource{}, `source.mongodb.uri: "<redacted>"`),
			leftOut: "source.mongodb.uri"},

		// object storage
		{name: "object storage skipInitialLoad and startAfter", pipe: `{"source":{"objectStorage":{"skipInitialLoad":"true","startAfter":"logs/2026/01/01.gz"}}}`,
			want: objectStorage(&swv1.ObjectStorageSource{SkipInitialLoad: ptr(true), StartAfter: ptr("logs/2026/01/01.gz")})},
		{name: "object storage skipInitialLoad not a boolean", pipe: `{"source":{"objectStorage":{"skipInitialLoad":"later"}}}`,
			want:    objectStorage(&swv1.ObjectStorageSource{}, `source.objectStorage.skipInitialLoad: "later"`),
			leftOut: "source.objectStorage.skipInitialLoad"},
		{name: "object storage startAfter not a string", pipe: `{"source":{"objectStorage":{"startAfter":{"key":"k"}}}}`,
			want:    objectStorage(&swv1.ObjectStorageSource{}, `source.objectStorage.startAfter.key: "k"`),
			leftOut: "source.objectStorage.startAfter"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { assertReadBetweenGoodPipes(t, tt.pipe, tt.want, tt.leftOut) })
	}
}
