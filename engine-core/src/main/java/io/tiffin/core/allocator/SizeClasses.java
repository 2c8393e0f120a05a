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
        int down = roundDown(size);
        // a size between two bounds goes one bin up; '+' lets a full mantissa carry into the exponent
        return lowerBound(down) == size ? down : down + 1;
    }

    /** Returns the largest bin whose lower bound is {@code <= size}. */
    static int roundDown(long size) {
        if (size < MANTISSA_VALUE) {
            return (int) size; // denormal: sizes 0..7 are their own bins
        }
        // normalised: the highest set bit is implicit, as in IEEE floats
        int mantissaStartBit = 63 - Long.numberOfLeadingZeros(size) - MANTISSA_BITS;
        int exp = mantissaStartBit + 1;
        return (exp << MANTISSA_BITS) | (int) ((size >>> mantissaStartBit) & MANTISSA_MASK);
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
