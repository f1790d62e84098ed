package treadle

import (
	"encoding/json"
	"time"

	"google.golang.org/protobuf/types/known/structpb"
)

// Duration is a time.Duration (an alias, so Settings read naturally).
type Duration = time.Duration

// normalise turns any JSON-marshalable value into the plain maps, slices, strings, float64 and
// bools structpb accepts (so State may hold ints and typed maps).
func normalise(v any) any {
	switch v.(type) {
	case nil, string, bool, float64, map[string]any, []any:
		if _, err := structpb.NewValue(v); err == nil {
			return v
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return v
	}
	return out
}

func stateStruct(s State) (*structpb.Struct, error) {
	m, _ := normalise(map[string]any(s)).(map[string]any)
	return structpb.NewStruct(m)
}
