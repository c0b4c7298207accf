package mcpserver

import (
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/wasmeval/wasmeval/sandbox"
)

// Output schemas of the tools' structured results, inferred from the Go
// types the handlers return (as the SDK infers them for typed tools), so
// they follow the types. Clients that check structuredContent against
// outputSchema (the TypeScript SDK does) see exactly these shapes.

// ContextCreated is create_code_context's structured result.
type ContextCreated struct {
	ID string `json:"id"`
}

// ContextDeleted is delete_code_context's structured result.
type ContextDeleted struct {
	ID      string `json:"id"`
	Deleted bool   `json:"deleted"`
}

var (
	evalOutputSchema   = mustSchema[sandbox.Details]()
	runOutputSchema    = mustSchema[sandbox.Execution]()
	createOutputSchema = mustSchema[ContextCreated]()
	deleteOutputSchema = mustSchema[ContextDeleted]()
)

// rawJSON is any JSON value: a json.RawMessage holds one (For would take
// it for the []byte it is in Go).
var rawJSON = &jsonschema.Schema{}

func mustSchema[T any]() *jsonschema.Schema {
	s, err := jsonschema.For[T](&jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[json.RawMessage](): rawJSON,
	}})
	if err != nil {
		panic(fmt.Sprintf("mcpserver: the output schema of %T: %v", *new(T), err))
	}
	return s
}
