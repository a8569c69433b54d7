package fakecloud

import "fmt"

// BigCDCPipe is a Postgres CDC pipe with the given number of table mappings,
// each of about 250 bytes: 4000 of them make the pipe about 1 MB, which the
// API allows, and more than a status can hold. With it, a list shows
// whether one big item hides the others.
func BigCDCPipe(id, name string, mappings int) map[string]any {
	tables := make([]any, mappings)
	for i := range tables {
		tables[i] = map[string]any{
			"sourceSchemaName":    "public",
			"sourceTable":         fmt.Sprintf("events_partition_with_a_long_name_%06d", i),
			"targetTable":         fmt.Sprintf("events_partition_with_a_long_name_%06d", i),
			"excludedColumns":     []any{"card_number", "iban"},
			"useCustomSortingKey": true,
			"sortingKeys":         []any{"tenant_id", "id"},
			"tableEngine":         "ReplacingMergeTree",
		}
	}
	p := postgresPipe()
	p["id"], p["name"] = id, name
	if source, ok := p["source"].(map[string]any); ok {
		if postgres, ok := source["postgres"].(map[string]any); ok {
			postgres["tableMappings"] = tables
		}
	}
	return p
}

// KafkaPipe is a small Kafka pipe of the given id, name and state, for
// lists of many pipes, or of pipes that share an id (the cloud has sent
// duplicates; SetPipes serves them in the order given).
func KafkaPipe(id, name, state string) map[string]any {
	p := kafkaPipe()
	p["id"], p["name"], p["state"] = id, name, state
	return p
}
