/**
 * SSD tier storage backend {@code bucket}: objects written in batches into bucket files, with a RocksDB
 * index from key to bucket, offset, length and CRC32C; O_DIRECT reads with a per-file buffered
 * fallback; watermark eviction by FIFO or LRU bucket order.
 */
package io.tiffin.plugin.storage;
