package io.tiffin.core.master;

import java.util.AbstractList;
import java.util.Arrays;
import java.util.Collection;

/**
 * A list for the master's per-object replica lists, which hold one element nearly always: 24 bytes with no
 * element or one (stored in place of an array), an array only from the second. An {@link java.util.ArrayList}
 * costs 48 bytes with one element (itself and its array); at tens of millions of objects with a memory and a
 * disk replica list each, the difference is gigabytes. Null elements are refused.
 *
 * <p>Not thread-safe: guarded by the lock of the metadata shard that holds the object.
 *
 * @param <E> the element type (never an {@code Object[]})
 */
final class CompactList<E> extends AbstractList<E> {
    /** Null (empty), the one element, or an {@code Object[]} whose first {@link #size} slots are the elements. */
    private Object store;
    private int size;

    CompactList() {
    }

    CompactList(Collection<? extends E> initial) {
        addAll(initial);
    }

    @Override
    public int size() {
        return size;
    }

    @Override
    @SuppressWarnings("unchecked")
    public E get(int index) {
        checkIndex(index, size);
        return (E) (size == 1 ? store : ((Object[]) store)[index]);
    }

    @Override
    @SuppressWarnings("unchecked")
    public E set(int index, E element) {
        checkIndex(index, size);
        requireElement(element);
        if (size == 1) {
            E old = (E) store;
            store = element;
            return old;
        }
        Object[] a = (Object[]) store;
        E old = (E) a[index];
        a[index] = element;
        return old;
    }

    @Override
    public void add(int index, E element) {
        checkIndex(index, size + 1);
        requireElement(element);
        modCount++;
        if (size == 0) {
            store = element;
        } else {
            Object[] a;
            if (size == 1) {
                a = new Object[2];
                a[0] = store;
            } else {
                a = (Object[]) store;
                if (a.length == size) {
                    a = Arrays.copyOf(a, size * 2);
                }
            }
            System.arraycopy(a, index, a, index + 1, size - index);
            a[index] = element;
            store = a;
        }
        size++;
    }

    @Override
    @SuppressWarnings("unchecked")
    public E remove(int index) {
        checkIndex(index, size);
        modCount++;
        E old;
        if (size == 1) {
            old = (E) store;
            store = null;
        } else {
            Object[] a = (Object[]) store;
            old = (E) a[index];
            System.arraycopy(a, index + 1, a, index, size - index - 1);
            a[size - 1] = null;
            if (size == 2) {
                store = a[0]; // back to the element in place
            }
        }
        size--;
        return old;
    }

    @Override
    public void clear() {
        modCount++;
        store = null;
        size = 0;
    }

    private static void checkIndex(int index, int bound) {
        if (index < 0 || index >= bound) {
            throw new IndexOutOfBoundsException("index " + index + " of " + bound);
        }
    }

    private static void requireElement(Object element) {
        if (element == null || element instanceof Object[]) {
            throw new IllegalArgumentException("a CompactList holds non-null, non-array elements: " + element);
        }
    }
}
