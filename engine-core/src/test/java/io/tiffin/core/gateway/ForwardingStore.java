package io.tiffin.core.gateway;

import io.netty.buffer.ByteBuf;
import io.tiffin.api.KeyResult;
import java.util.List;
import java.util.OptionalLong;

/**
 * A {@link GatewayStore} that passes every call on to another, for test stores that change or record a few calls
 * ({@link RecordingStore}, the failing store of {@link GatewayStoreErrorsTest}). It lends nothing ({@link #lend}
 * and {@link #lendAfterLookUp} keep their defaults), so every GET reaches {@link #get} or {@link #getAll}.
 *
 * <p>Thread-safe if the store it wraps is.
 */
class ForwardingStore implements GatewayStore {
    final GatewayStore store;

    ForwardingStore(GatewayStore store) {
        this.store = store;
    }

    @Override
    public ByteBuf get(String key, ValueBuffers buffers) {
        return store.get(key, buffers);
    }

    @Override
    public Versioned getVersioned(String key, ValueBuffers buffers) {
        return store.getVersioned(key, buffers);
    }

    @Override
    public List<KeyResult<ByteBuf>> getAll(List<String> keys, ValueBuffers buffers) {
        return store.getAll(keys, buffers);
    }

    @Override
    public void put(String key, ByteBuf value) {
        store.put(key, value);
    }

    @Override
    public List<KeyResult<Void>> putAll(List<String> keys, List<ByteBuf> values) {
        return store.putAll(keys, values);
    }

    @Override
    public boolean put(String key, ByteBuf value, PutTerms terms) {
        return store.put(key, value, terms);
    }

    @Override
    public boolean expire(String key, long ttlMillis) {
        return store.expire(key, ttlMillis);
    }

    @Override
    public boolean expire(String key, long ttlMillis, io.tiffin.core.client.ExpireCondition condition) {
        return store.expire(key, ttlMillis, condition);
    }

    @Override
    public boolean persist(String key) {
        return store.persist(key);
    }

    @Override
    public long ttlMillis(String key) {
        return store.ttlMillis(key);
    }

    @Override
    public List<KeyResult<Boolean>> exists(List<String> keys) {
        return store.exists(keys);
    }

    @Override
    public List<KeyResult<Void>> remove(List<String> keys) {
        return store.remove(keys);
    }

    @Override
    public long sizeHint(String key) {
        return store.sizeHint(key);
    }

    @Override
    public OptionalLong size(String key) {
        return store.size(key);
    }

    @Override
    public KeyListing list(String prefix, int limit) {
        return store.list(prefix, limit);
    }

    @Override
    public int listLimit() {
        return store.listLimit();
    }

    @Override
    public long removeAll() {
        return store.removeAll();
    }

    @Override
    public StoreStats stats() {
        return store.stats();
    }

    @Override
    public String describe() {
        return store.describe();
    }

    @Override
    public void close() {
        store.close();
    }
}
