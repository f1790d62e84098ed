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
