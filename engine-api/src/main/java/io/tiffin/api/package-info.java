/**
 * The Tiffin client API ({@link io.tiffin.api.KvStore}) and its value types. Depends on the JDK only.
 * Extension points live in {@code io.tiffin.api.spi}.
 */
package io.tiffin.api;
