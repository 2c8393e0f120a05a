/** Hot-cache admission and eviction policies. Filled by the hot-cache work; builds empty until then. */
package io.tiffin.plugin.hotcache;
