/**
 * SSD tier storage backend (bucket files with a RocksDB index). Filled by the SSD-tier work; the module
 * builds empty until then.
 */
package io.tiffin.plugin.storage;
