// The KDB module as libkdb5 sees it: dlopen mpc_kdb.so and check its exported table
// (DAL major version, and which optional slots are left to libkdb5's defaults).
#include <gtest/gtest.h>

#include <dlfcn.h>

extern "C" {
#include <kdb.h>
}

namespace {

class ModuleTable : public ::testing::Test {
 protected:
  void SetUp() override {
    handle_ = dlopen(MPC_KDB_MODULE_PATH, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle_, nullptr) << dlerror();
    table_ = static_cast<const kdb_vftabl *>(dlsym(handle_, "kdb_function_table"));
    ASSERT_NE(table_, nullptr);
  }
  void TearDown() override {
    if (handle_ != nullptr) dlclose(handle_);
  }
  void *handle_ = nullptr;
  const kdb_vftabl *table_ = nullptr;
};

TEST_F(ModuleTable, DeclaresTheDalVersionOfTheInstalledHeaders) {
  EXPECT_EQ(table_->maj_ver, KRB5_KDB_DAL_MAJOR_VERSION);
  EXPECT_EQ(table_->maj_ver, 9);
  EXPECT_EQ(table_->min_ver, 0);
}

TEST_F(ModuleTable, MandatoryAndForwardedSlotsAreSet) {
  EXPECT_NE(table_->init_library, nullptr);
  EXPECT_NE(table_->fini_library, nullptr);
  EXPECT_NE(table_->init_module, nullptr);
  EXPECT_NE(table_->fini_module, nullptr);
  EXPECT_NE(table_->create, nullptr);
  EXPECT_NE(table_->destroy, nullptr);
  EXPECT_NE(table_->get_principal, nullptr);
  EXPECT_NE(table_->put_principal, nullptr);
  EXPECT_NE(table_->delete_principal, nullptr);
  EXPECT_NE(table_->iterate, nullptr);
  EXPECT_NE(table_->promote_db, nullptr);
  EXPECT_NE(table_->lock, nullptr);
  EXPECT_NE(table_->unlock, nullptr);
  EXPECT_NE(table_->create_policy, nullptr);
  EXPECT_NE(table_->get_policy, nullptr);
  EXPECT_NE(table_->put_policy, nullptr);
  EXPECT_NE(table_->iter_policy, nullptr);
  EXPECT_NE(table_->delete_policy, nullptr);
  EXPECT_NE(table_->store_master_key_list, nullptr);
  EXPECT_NE(table_->decrypt_key_data, nullptr);
  EXPECT_NE(table_->encrypt_key_data, nullptr);
  EXPECT_NE(table_->check_policy_as, nullptr);
  EXPECT_NE(table_->check_policy_tgs, nullptr);
  EXPECT_NE(table_->audit_as_req, nullptr);
  EXPECT_NE(table_->refresh_config, nullptr);
  EXPECT_NE(table_->check_allowed_to_delegate, nullptr);
  EXPECT_NE(table_->free_principal_e_data, nullptr);
  EXPECT_NE(table_->get_s4u_x509_principal, nullptr);
  EXPECT_NE(table_->allowed_to_delegate_from, nullptr);
  EXPECT_NE(table_->issue_pac, nullptr);
  EXPECT_NE(table_->check_transited_realms, nullptr);
  EXPECT_NE(table_->get_age, nullptr);
}

TEST_F(ModuleTable, SlotsWithUnexportedDefaultsAreLeftToLibkdb5) {
  EXPECT_EQ(table_->rename_principal, nullptr);
  EXPECT_EQ(table_->fetch_master_key, nullptr);
  EXPECT_EQ(table_->fetch_master_key_list, nullptr);
  EXPECT_EQ(table_->dbe_search_enctype, nullptr);
  EXPECT_EQ(table_->change_pwd, nullptr);
}

TEST_F(ModuleTable, LibraryHooksSucceed) {
  EXPECT_EQ(table_->init_library(), 0);
  EXPECT_EQ(table_->fini_library(), 0);
}

}  // namespace
