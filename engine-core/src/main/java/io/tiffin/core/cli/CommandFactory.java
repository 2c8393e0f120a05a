package io.tiffin.core.cli;

import java.lang.reflect.Constructor;
import java.lang.reflect.Modifier;
import picocli.CommandLine;

/**
 * Creates the CLI's commands and mixins for picocli. The commands are package-private classes: picocli's default
 * factory first calls their constructors as if from outside the package, catches the {@link IllegalAccessException}
 * and tries again after {@code setAccessible(true)}, one caught exception per object; this factory opens the
 * constructor first. Anything else (collections, converters, other packages' classes) goes to the default factory.
 *
 * <p>Thread-safe (stateless).
 */
final class CommandFactory implements CommandLine.IFactory {
    static final CommandFactory INSTANCE = new CommandFactory();

    private CommandFactory() {
    }

    @Override
    public <K> K create(Class<K> cls) throws Exception {
        if (cls.getPackage() == CommandFactory.class.getPackage() && !cls.isInterface()
                && !Modifier.isAbstract(cls.getModifiers())) {
            Constructor<K> constructor;
            try {
                constructor = cls.getDeclaredConstructor();
            } catch (NoSuchMethodException e) {
                return CommandLine.defaultFactory().create(cls);
            }
            constructor.setAccessible(true);
            return constructor.newInstance();
        }
        return CommandLine.defaultFactory().create(cls);
    }
}
