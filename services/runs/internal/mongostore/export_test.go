package mongostore

import "go.mongodb.org/mongo-driver/v2/bson"

// Unpacked returns the task runs of a page stored packed, as stored before packing.
func Unpacked(packed bson.Binary) (bson.Raw, error) {
	var p packedTasks
	typ, data, err := bson.MarshalValue(packed)
	if err != nil {
		return nil, err
	}
	if err := p.UnmarshalBSONValue(byte(typ), data); err != nil {
		return nil, err
	}
	return bson.Marshal(packedPage{Tasks: p})
}
