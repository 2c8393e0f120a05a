package io.tiffin.core.gateway;

import io.netty.buffer.ByteBuf;
import io.tiffin.api.KeyResult;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A {@link GatewayStore} that passes every call on ({@link ForwardingStore}) and records it ({@code name:keys}, e.g. {@code getAll:16},
 * {@code list:prefix}), so tests can check how commands reach the store.
 *
 * <p>Thread-safe.
 */
final class RecordingStore extends ForwardingStore {
    final List<String> calls = new CopyOnWriteArrayList<>();
    /** Runs after each {@link #getVersioned} read, before its caller goes on (e.g. another client's write). */
    volatile Runnable afterVersionedRead = () -> { };

    RecordingStore(GatewayStore store) {
        super(store);
    }

    @Override
    public ByteBuf get(String key, ValueBuffers buffers) {
        calls.add("get:1");
        return store.get(key, buffers);
    }

    @Override
    public ByteBuf getRange(String key, long offset, int length, ValueBuffers buffers) {
        calls.add("getRange:1");
        return store.getRange(key, offset, length, buffers);
    }

    @Override
    public Versioned getVersioned(String key, ValueBuffers buffers) {
        calls.add("getVersioned:1");
        Versioned v = store.getVersioned(key, buffers);
        afterVersionedRead.run();
        return v;
    }

    @Override
    public List<KeyResult<ByteBuf>> getAll(List<String> keys, ValueBuffers buffers) {
        calls.add("getAll:" + keys.size());
        return store.getAll(keys, buffers);
    }

    @Override
    public void put(String key, ByteBuf value) {
        calls.add("put:1");
        store.put(key, value);
    }

    @Override
    public List<KeyResult<Void>> putAll(List<String> keys, List<ByteBuf> values) {
        calls.add("putAll:" + keys.size());
        return store.putAll(keys, values);
    }

    @Override
    public boolean put(String key, ByteBuf value, PutTerms terms) {
        calls.add("put:1");
        return store.put(key, value, terms);
    }

    @Override
    public List<KeyResult<Boolean>> exists(List<String> keys) {
        calls.add("exists:" + keys.size());
        return store.exists(keys);
    }

    @Override
    public List<KeyResult<Void>> remove(List<String> keys) {
        calls.add("remove:" + keys.size());
        return store.remove(keys);
    }

    @Override
    public OptionalLong size(String key) {
        calls.add("size:1");
        return store.size(key);
    }

    @Override
    public KeyListing list(String prefix, int limit) {
        calls.add("list:" + prefix);
        return store.list(prefix, limit);
    }

    @Override
    public long removeAll() {
        calls.add("removeAll");
        return store.removeAll();
    }
}
