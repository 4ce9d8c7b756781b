package embedded

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.mongodb.org/mongo-driver/v2/bson"
)

// opMsgBytes builds an OP_MSG from its sections, already encoded.
func opMsgBytes(t *testing.T, flags uint32, sections ...[]byte) []byte {
	t.Helper()
	msg := make([]byte, msgHeaderLen+4)
	binary.LittleEndian.PutUint32(msg[12:], opMsg)
	binary.LittleEndian.PutUint32(msg[16:], flags)
	for _, s := range sections {
		msg = append(msg, s...)
	}
	if flags&flagChecksumPresent != 0 {
		msg = append(msg, 0, 0, 0, 0)
	}
	binary.LittleEndian.PutUint32(msg, uint32(len(msg)))
	return msg
}

func bodySection(t *testing.T, doc bson.D) []byte {
	t.Helper()
	b, err := bson.Marshal(doc)
	require.NoError(t, err)
	return append([]byte{0}, b...)
}

func sequenceSection(t *testing.T, id string, docs ...bson.D) []byte {
	t.Helper()
	payload := append([]byte(id), 0)
	for _, d := range docs {
		b, err := bson.Marshal(d)
		require.NoError(t, err)
		payload = append(payload, b...)
	}
	s := make([]byte, 5, 5+len(payload))
	s[0] = 1
	binary.LittleEndian.PutUint32(s[1:], uint32(4+len(payload)))
	return append(s, payload...)
}

func TestCommandNameAndSerializing(t *testing.T) {
	t.Parallel()
	insertBody := bson.D{{Key: "insert", Value: "c"}, {Key: "$db", Value: "d"}}
	docs := sequenceSection(t, "documents", bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "_id", Value: 2}})

	tests := []struct {
		name          string
		msg           []byte
		wantName      string
		wantErr       bool
		wantSerialize bool
		wantMore      bool
	}{
		{name: "find", msg: opMsgBytes(t, 0, bodySection(t, bson.D{{Key: "find", Value: "c"}})), wantName: "find"},
		{name: "insert", msg: opMsgBytes(t, 0, bodySection(t, insertBody), docs), wantName: "insert", wantSerialize: true},
		{name: "sequence before body", msg: opMsgBytes(t, 0, docs, bodySection(t, insertBody)), wantName: "insert", wantSerialize: true},
		{name: "checksum present", msg: opMsgBytes(t, flagChecksumPresent, bodySection(t, bson.D{{Key: "update", Value: "c"}})), wantName: "update", wantSerialize: true},
		{name: "findAndModify, no reply wanted", msg: opMsgBytes(t, flagMoreToCome, bodySection(t, bson.D{{Key: "findAndModify", Value: "c"}})), wantName: "findAndModify", wantSerialize: true, wantMore: true},
		{name: "empty body", msg: opMsgBytes(t, 0, bodySection(t, bson.D{})), wantErr: true, wantSerialize: true},
		{name: "no body", msg: opMsgBytes(t, 0, docs), wantErr: true, wantSerialize: true},
		{name: "truncated section", msg: opMsgBytes(t, 0, []byte{0, 200, 0, 0, 0}), wantErr: true, wantSerialize: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name, err := commandName(tt.msg)
			if tt.wantErr {
				assert.Error(t, err)
			} else {
				require.NoError(t, err)
				assert.Equal(t, tt.wantName, name)
			}
			assert.Equal(t, tt.wantSerialize, mustSerialize(tt.msg))
			assert.Equal(t, tt.wantMore, moreToCome(tt.msg))
		})
	}
}
