package treadle

import (
	"strings"

	treadlev1 "github.com/treadle-dev/treadle/clients/go/gen/treadle/v1"
)

// ChunkType is the Mastra chunk type of c (the `part.type` of the Processor API): "text-delta",
// "finish", "tool-result", ...; a data chunk's is its name ("data-moderation"). "" for nil.
func ChunkType(c *treadlev1.Chunk) string {
	if d := c.GetData(); d != nil {
		return d.Name
	}
	f := c.ProtoReflect().WhichOneof(c.ProtoReflect().Descriptor().Oneofs().ByName("chunk"))
	if f == nil {
		return ""
	}
	return strings.ReplaceAll(string(f.Name()), "_", "-")
}

// TextDelta is a text-delta chunk of text part id (an empty id, in a released chunk, is given
// the id of the text part it lands in).
func TextDelta(id, text string) *treadlev1.Chunk {
	return &treadlev1.Chunk{Chunk: &treadlev1.Chunk_TextDelta{TextDelta: &treadlev1.TextDeltaChunk{Id: id, Text: text}}}
}

// Nested is the path of tool names and the innermost chunk of a tool-output chunk (a
// sub-agent's chunk, nested to any depth: path ["agent-research", "agent-write"]); any other
// chunk is (nil, c): the run's own.
func Nested(c *treadlev1.Chunk) (path []string, inner *treadlev1.Chunk) {
	if t := c.GetToolOutput(); t != nil {
		path = append(path, t.GetPath()...)
	}
	for c.GetToolOutput() != nil && c.GetToolOutput().GetOutput() != nil {
		c = c.GetToolOutput().GetOutput()
	}
	return path, c
}
