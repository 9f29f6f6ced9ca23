-- An activity update with an Idempotency-Key was accepted in a transaction of its own, with each of its statements
-- parsed and planned: at most about 400 a second on the machine where the group commit accepts 3,000-4,000 without
-- one. Such updates now go through the group commit too (ActivityUpdateBatch), whose prepared insert writes their
-- keys with the rest of the row. The batch replays a key used before on the same route and target, as an update
-- accepted alone does; a key that another transaction inserts meanwhile fails the batch's transaction on the unique
-- index updates_idempotency, and each of its requests is written again alone, where the key is replayed.
ALTER TYPE admitted_update
    ADD ATTRIBUTE idempotency_key text,
    ADD ATTRIBUTE idempotency_scope text,
    ADD ATTRIBUTE idempotency_fingerprint text;
