package io.tiffin.core.allocator;

/**
 * The allocator's size classes: a size as a small floating-point number with {@value #MANTISSA_BITS} mantissa
 * bits, so bin {@code (e << 3) + m} has the lower bound {@code (8 + m) << (e - 1)} (and exactly {@code m} for
 * sizes below 8). Sizes are in the allocator's internal units.
 *
 * <p>Thread-safe: static functions of their arguments only.
 */
final class SizeClasses {
    static final int MANTISSA_BITS = 3;
    private static final int MANTISSA_VALUE = 1 << MANTISSA_BITS;
    private static final int MANTISSA_MASK = MANTISSA_VALUE - 1;

    private SizeClasses() {
    }

    /** Returns the smallest bin whose lower bound is {@code >= size}. */
    static int roundUp(long size) {
        int exp = 0;
        long mantissa;
        if (size < MANTISSA_VALUE) {
            // Denormal: sizes 0..7 map to themselves.
            mantissa = size;
        } else {
            // Normalised: the highest set bit is implicit, like in IEEE floats.
            int highestSetBit = 63 - Long.numberOfLeadingZeros(size);
            int mantissaStartBit = highestSetBit - MANTISSA_BITS;
            exp = mantissaStartBit + 1;
            mantissa = (size >>> mantissaStartBit) & MANTISSA_MASK;
            long lowBitsMask = (1L << mantissaStartBit) - 1;
            if ((size & lowBitsMask) != 0) {
                mantissa++;
            }
        }
        // '+' rather than '|' lets a rounded-up mantissa carry into the exponent.
        return (exp << MANTISSA_BITS) + (int) mantissa;
    }

    /** Returns the largest bin whose lower bound is {@code <= size}. */
    static int roundDown(long size) {
        int exp = 0;
        long mantissa;
        if (size < MANTISSA_VALUE) {
            mantissa = size;
        } else {
            int highestSetBit = 63 - Long.numberOfLeadingZeros(size);
            int mantissaStartBit = highestSetBit - MANTISSA_BITS;
            exp = mantissaStartBit + 1;
            mantissa = (size >>> mantissaStartBit) & MANTISSA_MASK;
        }
        return (exp << MANTISSA_BITS) | (int) mantissa;
    }

    /** Returns the lower bound of a bin. */
    static long lowerBound(int floatValue) {
        int exponent = floatValue >>> MANTISSA_BITS;
        long mantissa = floatValue & MANTISSA_MASK;
        if (exponent == 0) {
            return mantissa;
        }
        return (mantissa | MANTISSA_VALUE) << (exponent - 1);
    }
}
