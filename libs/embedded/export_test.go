package embedded

// ApplyRetention drops now what k's retention no longer keeps, without waiting for its
// next round.
func ApplyRetention(k *Kafka) { k.cluster.ApplyRetention() }
