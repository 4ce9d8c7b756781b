package embedded

import (
	"encoding/binary"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// ApplyRetention drops now what k's retention no longer keeps, without waiting for its
// next round.
func ApplyRetention(k *Kafka) { k.cluster.ApplyRetention() }

// HoldWrites holds what a write to database db holds while it runs, until release.
func HoldWrites(m *Mongo, db string) (release func()) {
	body, err := bson.Marshal(bson.D{{Key: "insert", Value: "c"}, {Key: "$db", Value: db}})
	if err != nil {
		panic(err)
	}
	msg := make([]byte, msgHeaderLen+4, msgHeaderLen+5+len(body))
	binary.LittleEndian.PutUint32(msg[12:], opMsg)
	msg = append(append(msg, 0), body...)
	binary.LittleEndian.PutUint32(msg, uint32(len(msg)))
	return m.proxy.lock(msg)
}
