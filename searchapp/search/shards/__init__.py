"""A corpus' index in shards: each shard's index kept current from the shared database by
its own server (Ray actors, R replicas each), a query fanned out to one replica of every
shard and the answers merged as the single index would rank them (docs/scale-out.md)."""
