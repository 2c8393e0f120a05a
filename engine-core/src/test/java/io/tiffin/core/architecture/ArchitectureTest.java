package io.tiffin.core.architecture;

import static com.tngtech.archunit.base.DescribedPredicate.describe;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noMethods;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The package structure of engine-core, as docs/ARCHITECTURE.md draws it, checked on the compiled classes:
 * no cycle between packages, the client (which applications embed) apart from the servers' internals, the
 * servers apart from each other, and the foundations (transport, config, util, ...) below all of them.
 */
class ArchitectureTest {
    private static final String ROOT = "io.tiffin.core";
    private static JavaClasses classes;

    @BeforeAll
    static void importClasses() {
        classes = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages(ROOT);
    }

    @Test
    void packagesAreFreeOfCycles() {
        slices().matching(ROOT + ".(*)..").should().beFreeOfCycles().check(classes);
    }

    @Test
    void onlyTheCommandLineUsesTheWiringInTheRootPackage() {
        noClasses().that().resideOutsideOfPackages(ROOT, ROOT + ".cli..")
                .should().dependOnClassesThat().resideInAPackage(ROOT)
                .because("Tiffin and TiffinModule wire every part together; nothing below them may reach up")
                .check(classes);
    }

    @Test
    void theClientDependsOnNoServerInternals() {
        noClasses().that().resideInAPackage(ROOT + ".client..")
                .should().dependOnClassesThat().resideInAnyPackage(ROOT + ".master..", ROOT + ".node..",
                        ROOT + ".cli..", ROOT + ".metrics..")
                .because("applications embed the client; what it shares with nodes lives in io.tiffin.core.local")
                .check(classes);
    }

    @Test
    void masterAndNodeDoNotDependOnEachOtherOrOnTheClient() {
        noClasses().that().resideInAPackage(ROOT + ".master..")
                .should().dependOnClassesThat().resideInAnyPackage(ROOT + ".node..", ROOT + ".client..",
                        ROOT + ".cli..")
                .check(classes);
        noClasses().that().resideInAPackage(ROOT + ".node..")
                .should().dependOnClassesThat().resideInAnyPackage(ROOT + ".master..", ROOT + ".client..",
                        ROOT + ".cli..")
                .check(classes);
    }

    @Test
    void theRedisGatewayIsAFrontEndOverTheClient() {
        noClasses().that().resideOutsideOfPackages(ROOT + ".gateway..", ROOT + ".cli..")
                .should().dependOnClassesThat().resideInAPackage(ROOT + ".gateway..")
                .because("the Redis gateway is a front end, as the command line is; nothing in the engine knows it")
                .check(classes);
        noClasses().that().resideInAPackage(ROOT + ".gateway..")
                .should().dependOnClassesThat().resideInAnyPackage(ROOT + ".master..", ROOT + ".node..",
                        ROOT + ".cli..", ROOT + ".metrics..", ROOT + ".local..", ROOT + ".plugin..",
                        ROOT + ".allocator..", ROOT + ".keys..")
                .because("it reaches Tiffin through the client only (with config, transport and util)")
                .check(classes);
    }

    @Test
    void foundationsDependOnNoRole() {
        noClasses().that().resideInAnyPackage(ROOT + ".transport..", ROOT + ".config..", ROOT + ".util..",
                        ROOT + ".keys..", ROOT + ".allocator..", ROOT + ".local..", ROOT + ".plugin..",
                        ROOT + ".metrics..")
                .should().dependOnClassesThat().resideInAnyPackage(ROOT + ".master..", ROOT + ".node..",
                        ROOT + ".client..", ROOT + ".cli..")
                .check(classes);
    }

    @Test
    void noPublicMethodOfTheClientReturnsAProtobufType() {
        noPublicMethodReturnsAProtobufTypeIn(ROOT + ".client..");
    }

    @Test
    void outsideTheTransportNoPublicMethodReturnsAProtobufType() {
        // The RPC bindings speak the wire format by design: MasterRpcService maps opcodes to calls, and
        // InProcessMaster is a connection without the socket.
        noMethods().that().arePublic().and().areDeclaredInClassesThat().resideOutsideOfPackage(ROOT + ".transport..")
                .and().areDeclaredInClassesThat().arePublic()
                .and().areDeclaredInClassesThat().doNotHaveFullyQualifiedName(ROOT + ".master.MasterRpcService")
                .and().areDeclaredInClassesThat().doNotHaveFullyQualifiedName(ROOT + ".local.InProcessMaster")
                .should().haveRawReturnType(PROTOBUF)
                .because("the wire format stays in the transport (its Messages convert); callers see records")
                .check(classes);
    }

    private static void noPublicMethodReturnsAProtobufTypeIn(String packages) {
        noMethods().that().arePublic().and().areDeclaredInClassesThat().resideInAPackage(packages)
                .should().haveRawReturnType(PROTOBUF)
                .because("the client's callers see engine-api types and plain records, never the wire format")
                .check(classes);
    }

    private static final com.tngtech.archunit.base.DescribedPredicate<JavaClass> PROTOBUF =
            describe("a protobuf type", (JavaClass c) -> c.getPackageName().startsWith(ROOT + ".transport.proto")
                    || c.getPackageName().startsWith("com.google.protobuf"));
}
