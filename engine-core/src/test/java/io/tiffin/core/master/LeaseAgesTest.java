package io.tiffin.core.master;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class LeaseAgesTest {
    @Test
    void bucketsGrowWithAgeAndHoldAgesWithinAThirtySecondOfEachOther() {
        int previous = LeaseAges.bucket(0);
        long[] lowest = new long[LeaseAges.BUCKETS];
        java.util.Arrays.fill(lowest, -1);
        SplittableRandom random = new SplittableRandom(7);
        long[] ages = new long[200_000];
        for (int i = 0; i < ages.length; i++) {
            ages[i] = i < 100_000 ? i : random.nextLong(Long.MAX_VALUE >>> random.nextInt(63));
        }
        java.util.Arrays.sort(ages);
        for (long age : ages) {
            int b = LeaseAges.bucket(age);
            assertThat(b).as("age %d", age).isGreaterThanOrEqualTo(previous).isLessThan(LeaseAges.BUCKETS);
            previous = b;
            if (lowest[b] < 0) {
                lowest[b] = age;
            }
            assertThat(age - lowest[b]).as("ages %d and %d share a bucket", lowest[b], age)
                    .isLessThanOrEqualTo(Math.max(0, lowest[b] / LeaseAges.SUB_BUCKETS));
        }
        assertThat(LeaseAges.bucket(Long.MAX_VALUE)).isEqualTo(LeaseAges.BUCKETS - 1);
        assertThat(LeaseAges.bucket(-5)).as("a lease that ends later counts as age 0").isZero();
    }

    @Test
    void theBoundaryIsWhereTheWantedOldestEnd() {
        LeaseAges ages = new LeaseAges();
        for (long age : new long[] {1, 2, 2, 3, 10_000, 10_000, 50_000}) {
            ages.add(age);
        }
        assertThat(ages.total()).isEqualTo(7);
        int oldest = ages.boundary(1);
        assertThat(oldest).isEqualTo(LeaseAges.bucket(50_000));
        assertThat(ages.countAbove(oldest)).isZero();
        int three = ages.boundary(3);
        assertThat(three).isEqualTo(LeaseAges.bucket(10_000));
        assertThat(ages.countAbove(three)).isEqualTo(1);
        assertThat(ages.boundary(2)).as("two wanted: the bucket of 10,000 holds the second").isEqualTo(three);
        assertThat(ages.boundary(5)).isEqualTo(LeaseAges.bucket(2));
        assertThat(ages.countAbove(ages.boundary(5))).isEqualTo(4);
        assertThat(ages.boundary(100)).as("more wanted than counted").isZero();
    }
}
