package io.tiffin.core.master;

import java.util.AbstractList;
import java.util.Arrays;
import java.util.Collection;
import java.util.RandomAccess;

/**
 * A list for the master's per-object replica lists, which hold one element nearly always, kept in one reference
 * (its <em>slot</em>): null when empty, the element itself when there is one, an {@code Object[]} exactly as long
 * as the list from the second (replica lists stay short, so an add or remove copies a few references). The slot
 * lives where the subclass says: a field of the list ({@link #create()}: 16 bytes with no element or one) or a
 * field of the object that owns the list, the list being a view of it ({@link ObjectMetadata#replicas()}: no bytes
 * of its own). An {@link java.util.ArrayList} costs 48 bytes with one element (itself and its array); at tens of
 * millions of objects the difference is gigabytes. Null elements are refused.
 *
 * <p>Not thread-safe: guarded by the lock of the metadata shard that holds the object. A change through one view
 * is not detected by an iterator of another view of the same slot: iterate and change through one view.
 *
 * @param <E> the element type (never an {@code Object[]})
 */
abstract class CompactList<E> extends AbstractList<E> implements RandomAccess {

    /** An empty list with a slot of its own. */
    static <E> CompactList<E> create() {
        return new Owned<>();
    }

    /** A list with a slot of its own, holding {@code initial}. */
    static <E> CompactList<E> create(Collection<? extends E> initial) {
        CompactList<E> list = new Owned<>();
        list.addAll(initial);
        return list;
    }

    /** The slot: null, the one element, or an {@code Object[]} of the elements. */
    abstract Object slot();

    abstract void slot(Object value);

    @Override
    public int size() {
        Object s = slot();
        return s == null ? 0 : s instanceof Object[] a ? a.length : 1;
    }

    @Override
    public boolean isEmpty() {
        return slot() == null;
    }

    @Override
    @SuppressWarnings("unchecked")
    public E get(int index) {
        Object s = slot();
        if (s instanceof Object[] a) {
            checkIndex(index, a.length);
            return (E) a[index];
        }
        checkIndex(index, s == null ? 0 : 1);
        return (E) s;
    }

    @Override
    @SuppressWarnings("unchecked")
    public E set(int index, E element) {
        requireElement(element);
        Object s = slot();
        if (s instanceof Object[] a) {
            checkIndex(index, a.length);
            E old = (E) a[index];
            a[index] = element;
            return old;
        }
        checkIndex(index, s == null ? 0 : 1);
        slot(element);
        return (E) s;
    }

    @Override
    public void add(int index, E element) {
        requireElement(element);
        Object s = slot();
        int size = size();
        checkIndex(index, size + 1);
        modCount++;
        if (s == null) {
            slot(element);
            return;
        }
        Object[] old = s instanceof Object[] a ? a : new Object[] {s};
        Object[] grown = new Object[size + 1];
        System.arraycopy(old, 0, grown, 0, index);
        grown[index] = element;
        System.arraycopy(old, index, grown, index + 1, size - index);
        slot(grown);
    }

    @Override
    @SuppressWarnings("unchecked")
    public E remove(int index) {
        Object s = slot();
        int size = size();
        checkIndex(index, size);
        modCount++;
        if (!(s instanceof Object[] a)) {
            slot(null);
            return (E) s;
        }
        E old = (E) a[index];
        if (size == 2) {
            slot(a[1 - index]); // back to the element in place
        } else {
            Object[] shrunk = Arrays.copyOf(a, size - 1);
            System.arraycopy(a, index + 1, shrunk, index, size - index - 1);
            slot(shrunk);
        }
        return old;
    }

    @Override
    public void clear() {
        modCount++;
        slot(null);
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

    /** A list whose slot is its own field. */
    private static final class Owned<E> extends CompactList<E> {
        private Object slot;

        @Override
        Object slot() {
            return slot;
        }

        @Override
        void slot(Object value) {
            slot = value;
        }
    }
}
