/**
 * The built-in hot-cache admission and eviction policies ({@link io.tiffin.plugin.hotcache.HotCachePlugin}):
 * LRU, SIEVE, S3-FIFO and Window TinyLFU, each weighted in blocks and confined to the cache's
 * maintenance thread.
 */
package io.tiffin.plugin.hotcache;
